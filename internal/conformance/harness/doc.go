// Package harness builds and runs a real control plane for the conformance
// suite: etcd and kube-apiserver, built once from the Go module proxy and
// cached outside the repository, started on loopback with generated
// certificates and static bearer tokens.
//
//   - EnsureBinaries builds etcd and kube-apiserver from the modules under
//     build/ into the user cache directory, under a lock file, and reuses them.
//   - StartCluster starts etcd, a kube-apiserver with the watch cache and one
//     without it (so a compacted RV is refused on a watch too), all in their
//     own process groups with a parent-death signal; Cluster.Stop stops them.
//   - KillAll is the last resort for signal handlers.
//   - Proxy sits between a client and a server and cuts connections on demand.
package harness
