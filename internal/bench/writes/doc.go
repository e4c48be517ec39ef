// Package writes benchmarks the write path of kwatch's client (package
// client on a kube.Client) beside client-go's typed clientset, against the
// simulated API server (package sim) over loopback HTTP/1.1.
//
//   - Verbs: create, get, update (with the resourceVersion of the last
//     answer), merge patch and delete, each on *corev1.ConfigMap and
//     *corev1.Pod. One benchmark iteration is one request.
//   - Rows: kwatch-json and client-go-json send and ask for JSON;
//     kwatch-proto (client.Options.Encoding Protobuf) and client-go-proto
//     (client-go's default for built-in types) send create and update
//     bodies in protobuf and ask for protobuf answers. The simulator
//     answers JSON whatever is asked, so the proto rows measure protobuf
//     encoding of bodies and JSON decoding of answers, for both clients
//     alike. Patches are JSON in every row.
//   - The simulator runs in a child process (the test binary started again
//     with -writes.serve-sim), so allocs/op and B/op are the client's own:
//     request building, transport, encoding and decoding.
//   - Rate limits are off on both sides; each row has its own connection
//     and sends its requests one after another.
//
// Both clients are used as a caller would use them by default, apart from
// the content type and the rate limit: kwatch names a field manager on
// every write (the program's name), client-go names none; client-go sends
// a DeleteOptions body with every delete, kwatch sends none when no option
// is set.
package writes
