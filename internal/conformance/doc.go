// Package conformance runs the kwatch conformance suite (package suite)
// against a real kube-apiserver with etcd, built from source and cached
// (package harness), and against the simulator (internal/rig/sim).
//
// Run it with `go test -race -count=1 -v ./...` from this directory; the
// summary at the end gives the cases run and passed per server. Set
// KWATCH_CONFORMANCE_REAL=0 to run against the simulator only. See README.md.
package conformance
