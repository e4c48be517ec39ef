// Package suite is the conformance suite: cases written once against the
// Target interface and run against both the real kube-apiserver and the
// simulator, exercising kwatch's watch client and informer (never
// client-go).
//
//   - Each case gets a fresh namespace, an admin client and a writer (Env).
//   - Cases assert protocol behaviour and wait with generous, bounded
//     deadlines; none depends on how fast the machine is.
//   - Run counts the cases run, passed, failed and skipped per target.
//   - Operations a case cannot do through the API ("make this RV too old")
//     are the Target's.
//   - The informer cases run in both store modes: informer/... keeps typed
//     objects, informer-compact/... the encoded ones (protobuf from the real
//     server for k8s.io/api types), and the compact cases also restart
//     informers from snapshot files (cases_snapshot.go). Every one ends
//     with each store, and each handler's replay, equal to the server.
package suite
