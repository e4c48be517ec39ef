package sim

import "fmt"

// deleteOptionsJSON turns a protobuf DeleteOptions body into the JSON
// parseDeleteOptions reads. client-go's typed clients send one in protobuf when
// they speak protobuf, its envelope naming their own group's apiVersion
// ("v1", "apps/v1"), which the real server accepts for any group; the table
// (protoschema_gen.go) has the message under meta.k8s.io/v1.
func deleteOptionsJSON(body []byte) ([]byte, *StatusError) {
	env, err := readPBEnvelope(body)
	if err != nil {
		return nil, errBadRequest("the DeleteOptions in the body could not be decoded: " + err.Error())
	}
	if env.kind != "" && env.kind != "DeleteOptions" {
		return nil, errBadRequest(fmt.Sprintf("no kind %q is registered for version %q in scheme %q",
			env.kind, "meta.k8s.io/v1", "pkg/runtime/scheme.go:111"))
	}
	root, ok := pbRoots["meta.k8s.io/v1 DeleteOptions"]
	if !ok {
		return nil, errBadRequest("protobuf DeleteOptions are not supported")
	}
	n := env.raw.end - env.raw.start
	d := pbDecoder{buf: body, limit: pbJSONLimit(n), out: make([]byte, 0, 2*n+16)}
	d.out = append(d.out, '{')
	first := true
	if err := d.fields(&pbMessages[root], []pbSpan{env.raw}, &first); err != nil {
		return nil, errBadRequest("the DeleteOptions in the body could not be decoded: " + err.Error())
	}
	return append(d.out, '}'), nil
}
