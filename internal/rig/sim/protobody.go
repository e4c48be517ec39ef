package sim

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

//go:generate go run -C ../../conformance ./cmd/protoschema -o ../rig/sim/protoschema_gen.go

// Protobuf request bodies. kubectl sends creates of built-in kinds in protobuf
// (kubectl-create-namespace-requests.txt); the simulator cannot import the generated
// types, so protoschema_gen.go describes their messages (field numbers, JSON names,
// kinds, omitempty) and the decoder here writes the JSON the real server would
// write for the typed object it decodes. That JSON then takes the JSON path
// (decodeObject). A body is:
//
//   - the magic "k8s\x00", then a runtime.Unknown: 1 typeMeta {1 apiVersion,
//     2 kind}, 2 raw (the object's message), 3 contentEncoding, 4 contentType (both
//     ignored, as the real server ignores them);
//   - an empty typeMeta field means the kind of the URL;
//   - a kind the table lacks (custom resources) is 415 when it is the URL's, as it
//     was before protobuf was read at all (the real v1.37.2 server's handler for
//     custom resources fails the request without an answer);
//   - every malformed body is a 400 worded as the real server words it, with the
//     decoder's detail: the field's JSON path and the byte offset in the body.

// mediaProtobuf is the Kubernetes protobuf media type.
const mediaProtobuf = "application/vnd.kubernetes.protobuf"

// pbMagic starts every protobuf body.
var pbMagic = []byte("k8s\x00")

// pbJSONLimit bounds the JSON written for a message of n bytes (checked after each
// field, so the last one may pass it). Protobuf is denser than JSON (a field name
// costs one tag byte, and absent fields may still be written, "resources":{}): the
// JSON of real objects is about 3 times the message, and 16 times leaves room for
// that while a hostile body of empty messages, each written as a dozen zero fields,
// is refused instead of growing the server.
func pbJSONLimit(n int) int { return 16*n + 64<<10 }

// pbEnvelope is a body's runtime.Unknown.
type pbEnvelope struct {
	apiVersion, kind string
	raw              pbSpan
}

// readPBEnvelope reads the runtime.Unknown after the magic of body.
func readPBEnvelope(body []byte) (pbEnvelope, error) {
	var env pbEnvelope
	if !bytes.HasPrefix(body, pbMagic) {
		return env, &pbError{msg: "no protobuf magic", off: 0}
	}
	r := pbReader{buf: body, pos: len(pbMagic), end: len(body)}
	for {
		t, ok, err := r.tag("Unknown")
		if err != nil || !ok {
			return env, err
		}
		if t.num > 4 {
			if err := r.skip(t); err != nil {
				return env, err
			}
			continue
		}
		name := [...]string{1: "TypeMeta", 2: "Raw", 3: "ContentEncoding", 4: "ContentType"}[t.num]
		if err := wantWire(t, wireBytes, name); err != nil {
			return env, err
		}
		s, err := r.bytes()
		if err != nil {
			return env, err
		}
		switch t.num {
		case 1:
			if err := readTypeMeta(body, s, &env); err != nil {
				return env, err
			}
		case 2:
			env.raw = s
		}
	}
}

// readTypeMeta reads {1 apiVersion, 2 kind} into env; a repeated typeMeta merges.
func readTypeMeta(body []byte, s pbSpan, env *pbEnvelope) error {
	r := pbReader{buf: body, pos: s.start, end: s.end}
	for {
		t, ok, err := r.tag("TypeMeta")
		if err != nil || !ok {
			return err
		}
		if t.num != 1 && t.num != 2 {
			if err := r.skip(t); err != nil {
				return err
			}
			continue
		}
		if err := wantWire(t, wireBytes, pick(t.num == 1, "APIVersion", "Kind")); err != nil {
			return err
		}
		v, err := r.bytes()
		if err != nil {
			return err
		}
		if t.num == 1 {
			env.apiVersion = string(body[v.start:v.end])
		} else {
			env.kind = string(body[v.start:v.end])
		}
	}
}

// ProtobufToJSON returns the JSON of the object a protobuf request body carries
// (the "k8s\x00" magic, then a runtime.Unknown naming a built-in kind the simulator
// knows), as the real server writes the typed object it decodes: kind and
// apiVersion from the envelope, then the object's fields with encoding/json's
// omission rules, before any defaulting or server-set metadata. An error is a 400
// *StatusError naming what was wrong: the field's JSON path and the byte offset.
// It is safe to call from any goroutine.
func ProtobufToJSON(body []byte) ([]byte, error) {
	env, _ := readPBEnvelope(body) // an error shows again below, worded for the client
	out, serr := protobufToJSON(body, env.apiVersion, env.kind)
	if serr != nil {
		return nil, serr
	}
	return out, nil
}

// decodeProtobuf turns a create or update body for r into the JSON decodeObject reads.
func decodeProtobuf(r *resource, body []byte, ct string) ([]byte, *StatusError) {
	if _, ok := pbRoots[r.info.apiVersion()+" "+r.info.Kind]; !ok {
		return nil, errUnsupportedBody(r, ct)
	}
	return protobufToJSON(body, r.info.apiVersion(), r.info.Kind)
}

// protobufToJSON decodes body as an object of the given kind.
func protobufToJSON(body []byte, wantAPIVersion, wantKind string) ([]byte, *StatusError) {
	unrecognized := func(detail string) *StatusError {
		return errBadRequest("the object provided is unrecognized (must be of type " + wantKind + "): " +
			detail + " (" + summarizeBody(body) + ")")
	}
	switch {
	case len(body) == 0:
		return nil, unrecognized("empty data")
	case !bytes.HasPrefix(body, pbMagic):
		return nil, unrecognized("provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]")
	case len(body) == len(pbMagic):
		return nil, unrecognized("empty body")
	}
	env, err := readPBEnvelope(body)
	if err != nil {
		return nil, unrecognized(err.Error())
	}
	apiVersion, kind := env.apiVersion, env.kind
	if apiVersion == "" {
		apiVersion = wantAPIVersion
	}
	if kind == "" {
		kind = wantKind
	}
	cannot := func(detail string) *StatusError {
		return errBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s",
			kind, versionOf(apiVersion), wantKind, detail))
	}
	root, known := pbRoots[apiVersion+" "+kind]
	switch {
	case !known:
		return nil, cannot(fmt.Sprintf("no kind %q is registered for version %q in scheme %q",
			kind, apiVersion, "pkg/runtime/scheme.go:111"))
	case apiVersion != wantAPIVersion || kind != wantKind:
		return nil, cannot(fmt.Sprintf("converting (%s.%s) to (%s.%s): unknown conversion",
			versionOf(apiVersion), kind, internalPackage(wantAPIVersion), wantKind))
	}
	n := env.raw.end - env.raw.start
	d := pbDecoder{buf: body, limit: pbJSONLimit(n), out: make([]byte, 0, 2*n+64)}
	d.out = append(d.out, `{"kind":`...)
	d.out = appendJSONString(d.out, kind)
	d.out = append(d.out, `,"apiVersion":`...)
	d.out = appendJSONString(d.out, apiVersion)
	first := false
	if err := d.fields(&pbMessages[root], []pbSpan{env.raw}, &first); err != nil {
		return nil, cannot(err.Error())
	}
	return append(d.out, '}'), nil
}

// errUnsupportedBody is the 415 for a body in a media type r cannot be read from.
func errUnsupportedBody(r *resource, ct string) *StatusError {
	accepted := "application/json, application/yaml"
	if _, ok := pbRoots[r.info.apiVersion()+" "+r.info.Kind]; ok {
		accepted += ", " + mediaProtobuf
	}
	return newStatus(http.StatusUnsupportedMediaType, "UnsupportedMediaType",
		"the body of the request was in an unknown format - accepted media types include: "+accepted+
			" (got "+strconv.Quote(ct)+")", nil)
}

// summarizeBody is how the real server quotes a body it cannot recognize: up to 30
// bytes, as text when it looks like JSON, else in hex.
func summarizeBody(b []byte) string {
	const max = 30
	more := ""
	if len(b) > max {
		b, more = b[:max], " ..."
	}
	switch {
	case len(b) == 0:
		return "<empty>"
	case b[0] == '{':
		return string(b) + more
	}
	return hex.EncodeToString(b) + more
}

// versionOf is the version part of an apiVersion: "v1" for "apps/v1".
func versionOf(apiVersion string) string {
	_, v, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return apiVersion
	}
	return v
}

// internalPackage names the real server's internal package of an API group in
// conversion errors: "core" for the core group, else the group's first label.
func internalPackage(apiVersion string) string {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return "core"
	}
	name, _, _ := strings.Cut(group, ".")
	return name
}
