// Package webhooks benchmarks kwatch's webhook server (package webhook)
// beside controller-runtime's (pkg/webhook, pkg/webhook/admission) on the
// same work: a validating and a mutating (defaulting) handler on a typed
// *corev1.ConfigMap, requests spread over GOMAXPROCS goroutines.
//
//   - BenchmarkAdmission: each AdmissionReview served through the
//     handler's http.Handler in process (no TLS, no network: the
//     handlers' own cost);
//   - BenchmarkAdmissionHTTPS: through each project's HTTPS server (its
//     metrics on, its certificate from files), called over TLS on
//     loopback by one HTTP/2 client; the CPU there is the whole
//     process's, client included.
//
// Each row reports ns/op (wall time per request across the parallel
// clients; requests/s is its inverse), cpu-ns/op (process CPU per request,
// from getrusage) and allocs. Rounds of one invocation each put every
// kwatch row beside its controller-runtime row in time:
//
//	go test -c -o webhooks.test ./webhooks/
//	for i in 1 2 3 4 5; do ./webhooks.test -test.run '^$' -test.bench . -test.benchtime 20000x; done
package webhooks
