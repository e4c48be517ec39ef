package sim_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// A tiny protobuf writer: each helper returns one encoded field.

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// pbVarint is a varint field.
func pbVarint(num int, v uint64) []byte { return appendVarint(appendVarint(nil, uint64(num)<<3), v) }

// pbBytes is a length-delimited field holding the concatenation of parts.
func pbBytes(num int, parts ...[]byte) []byte {
	payload := bytes.Join(parts, nil)
	b := appendVarint(appendVarint(nil, uint64(num)<<3|2), uint64(len(payload)))
	return append(b, payload...)
}

// pbStr is a string field.
func pbStr(num int, s string) []byte { return pbBytes(num, []byte(s)) }

// pbEntry is a map entry field.
func pbEntry(num int, key string, value []byte) []byte { return pbBytes(num, pbStr(1, key), value) }

// pbBody is a request body: the magic and a runtime.Unknown around the object's fields.
func pbBody(apiVersion, kind string, fields ...[]byte) []byte {
	unknown := append(pbBytes(1, pbStr(1, apiVersion), pbStr(2, kind)), pbBytes(2, fields...)...)
	return append([]byte("k8s\x00"), unknown...)
}

// pbMeta is an ObjectMeta field (1) with a name and labels.
func pbMeta(name string, labels ...string) []byte {
	fields := [][]byte{pbStr(1, name)}
	for i := 0; i+1 < len(labels); i += 2 {
		fields = append(fields, pbEntry(11, labels[i], pbStr(2, labels[i+1])))
	}
	return pbBytes(1, fields...)
}

const ctProtobuf = "application/vnd.kubernetes.protobuf"

// postPB sends a protobuf body and returns the status and body.
func postPB(t *testing.T, h *simkit.Harness, method, path string, body []byte) (int, []byte) {
	t.Helper()
	return do(t, h, method, path, "application/vnd.kubernetes.protobuf, application/json", body, "Content-Type", ctProtobuf)
}

// TestProtobufCreate: the bodies kubectl sends for built-in kinds are stored as the
// real server stores them (namespace, configmap, secret and deployment as in
// kubectl-create-stored.json, apart from the real server's defaulting).
func TestProtobufCreate(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	tests := []struct {
		name, path string
		body       []byte
		want       string // fields of the stored object besides metadata
		wantMeta   map[string]any
	}{
		{"namespace", "/api/v1/namespaces", pbBody("v1", "Namespace", pbMeta("demo"), pbBytes(2), pbBytes(3)),
			`{"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}`,
			map[string]any{"name": "demo", "labels": map[string]any{"kubernetes.io/metadata.name": "demo"}}},
		{"configmap", "/api/v1/namespaces/demo/configmaps", pbBody("v1", "ConfigMap",
			pbMeta("x"), pbEntry(2, "a", pbStr(2, "b")), pbEntry(3, "bin", pbBytes(2, []byte{0, 0xff}))),
			`{"data":{"a":"b"},"binaryData":{"bin":"AP8="}}`, map[string]any{"name": "x", "namespace": "demo"}},
		{"secret", "/api/v1/namespaces/demo/secrets", pbBody("v1", "Secret",
			pbBytes(1, pbStr(1, "s"), pbStr(3, "demo")), pbEntry(2, "a", pbStr(2, "b")), pbStr(3, "Opaque")),
			`{"data":{"a":"Yg=="},"type":"Opaque"}`, map[string]any{"name": "s", "namespace": "demo"}},
		{"deployment", "/apis/apps/v1/namespaces/demo/deployments", pbBody("apps/v1", "Deployment",
			pbMeta("web", "app", "web"),
			pbBytes(2, pbVarint(1, 1), pbBytes(2, pbEntry(1, "app", pbStr(2, "web"))),
				pbBytes(3, pbMeta("", "app", "web"), pbBytes(2, pbBytes(2, pbStr(1, "nginx"), pbStr(2, "nginx"), pbBytes(8)))),
				pbBytes(4)),
			pbBytes(3)),
			`{"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},` +
				`"spec":{"containers":[{"name":"nginx","image":"nginx","resources":{}}]}},"strategy":{}},"status":{}}`,
			map[string]any{"name": "web", "namespace": "demo", "labels": map[string]any{"app": "web"}, "generation": float64(1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := postPB(t, h, "POST", tc.path+"?fieldManager=kubectl-create&fieldValidation=Strict", tc.body)
			require.Equal(t, 201, code, "%s", body)
			got := decodeMap(t, body)
			md := got["metadata"].(map[string]any)
			for _, k := range []string{"uid", "resourceVersion", "creationTimestamp"} {
				require.NotEmpty(t, md[k], "server-set metadata.%s", k)
				delete(md, k)
			}
			delete(md, "managedFields") // field ownership is not what this test is about
			require.Equal(t, tc.wantMeta, md)
			delete(got, "metadata")
			want := decodeMap(t, []byte(tc.want))
			want["kind"], want["apiVersion"] = got["kind"], got["apiVersion"]
			require.Equal(t, want, got)
		})
	}
}

// TestProtobufUpdate: a PUT in protobuf replaces the object; its resourceVersion
// is a precondition, as in JSON.
func TestProtobufUpdate(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	obj, err := h.Server.Create("configmaps", []byte(`{"metadata":{"name":"x","namespace":"demo"},"data":{"a":"b"}}`))
	require.NoError(t, err)
	const path = "/api/v1/namespaces/demo/configmaps/x"
	code, body := postPB(t, h, "PUT", path, pbBody("v1", "ConfigMap",
		pbBytes(1, pbStr(1, "x"), pbStr(3, "demo"), pbStr(6, "1")), pbEntry(2, "a", pbStr(2, "stale"))))
	require.Equal(t, 409, code, "a stale resourceVersion: %s", body)
	code, body = postPB(t, h, "PUT", path, pbBody("v1", "ConfigMap",
		pbBytes(1, pbStr(1, "x"), pbStr(3, "demo"), pbStr(6, strconv.FormatUint(obj.ResourceVersion, 10))), pbEntry(2, "a", pbStr(2, "changed"))))
	require.Equal(t, 200, code, "%s", body)
	require.Equal(t, map[string]any{"a": "changed"}, decodeMap(t, body)["data"])
}

// TestProtobufWireRules: what the generated code does with unusual but valid wire
// input, the simulator does too.
func TestProtobufWireRules(t *testing.T) {
	tests := []struct {
		name string
		body []byte
		want string // a JSON object the result must contain
	}{
		{"unknown fields are skipped, groups too", pbBody("v1", "ConfigMap", pbMeta("x"),
			pbVarint(99, 7), pbStr(98, "?"), []byte{0xcb, 0x06, 0x08, 0x01, 0xcc, 0x06}, pbEntry(2, "a", pbStr(2, "b"))),
			`{"data":{"a":"b"}}`},
		{"a repeated message field merges", pbBody("v1", "ConfigMap", pbBytes(1, pbStr(1, "x")), pbBytes(1, pbStr(3, "demo"))),
			`{"metadata":{"name":"x","namespace":"demo"}}`},
		{"the last of a repeated scalar wins", pbBody("v1", "ConfigMap", pbBytes(1, pbStr(1, "x"), pbStr(1, "y"))),
			`{"metadata":{"name":"y"}}`},
		{"the last of a repeated map key wins", pbBody("v1", "ConfigMap", pbMeta("x"),
			pbEntry(2, "k", pbStr(2, "1")), pbEntry(2, "k", pbStr(2, "2")), pbBytes(2, pbStr(1, "novalue"))),
			`{"data":{"k":"2","novalue":""}}`},
		{"packed and unpacked lists of varints", pbBody("v1", "Pod", pbMeta("p"),
			pbBytes(2, pbBytes(14, pbVarint(4, 1), pbBytes(4, appendVarint(appendVarint(nil, 2), 1<<40)), pbVarint(4, 3)))),
			`{"spec":{"containers":null,"securityContext":{"supplementalGroups":[1,2,1099511627776,3]}}}`},
		{"negative int32 and int64", pbBody("apps/v1", "Deployment", pbMeta("d"),
			pbBytes(2, pbVarint(1, 1<<64-5), pbBytes(3, pbBytes(2, pbVarint(4, 1<<64-1))))),
			`{"spec":{"replicas":-5,"template":{"spec":{"terminationGracePeriodSeconds":-1}}}}`},
		{"invalid UTF-8 becomes U+FFFD, per byte", pbBody("v1", "ConfigMap", pbMeta("x"), pbEntry(2, "k", pbStr(2, "a\xff\xfeb"))),
			`{"data":{"k":"a\ufffd\ufffdb"}}`},
		{"contentEncoding and contentType are ignored", append(pbBody("v1", "ConfigMap", pbMeta("x")), pbStr(3, "gzip")...),
			`{"metadata":{"name":"x"}}`},
		{"times: seconds only, micro times to the microsecond, empty is null", pbBody("coordination.k8s.io/v1", "Lease", pbMeta("l"),
			pbBytes(2, pbBytes(3, pbVarint(1, 1764590691), pbVarint(2, 123456789)), pbBytes(4))),
			`{"spec":{"acquireTime":"2025-12-01T12:04:51.123456Z","renewTime":null}}`},
		{"int-or-string both ways", pbBody("apps/v1", "Deployment", pbMeta("d"), pbBytes(2, pbBytes(4, pbBytes(2,
			pbBytes(1, pbVarint(1, 0), pbVarint(2, 3)), pbBytes(2, pbVarint(1, 1), pbStr(3, "25%")))))),
			`{"spec":{"strategy":{"rollingUpdate":{"maxUnavailable":3,"maxSurge":"25%"}}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := sim.ProtobufToJSON(tc.body)
			require.NoError(t, err)
			requireSubset(t, decodeMap(t, []byte(tc.want)), decodeMap(t, out), "")
		})
	}
}

// TestProtobufEnvelopeDefaults: an envelope without a type means the URL's kind.
func TestProtobufEnvelopeDefaults(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	for i, body := range [][]byte{
		append([]byte("k8s\x00"), pbBytes(2, pbMeta("no-type"))...),
		append([]byte("k8s\x00"), append(pbBytes(1, pbStr(2, "ConfigMap")), pbBytes(2, pbMeta("kind-only"))...)...),
	} {
		code, resp := postPB(t, h, "POST", "/api/v1/namespaces/demo/configmaps", body)
		require.Equal(t, 201, code, "body %d: %s", i, resp)
		got := decodeMap(t, resp)
		require.Equal(t, "ConfigMap", got["kind"])
		require.Equal(t, "v1", got["apiVersion"])
	}
}

// requireSubset fails unless every field of want is in got with the same value
// (objects compared field by field, everything else whole).
func requireSubset(t *testing.T, want, got map[string]any, path string) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		require.True(t, ok, "%s%s missing from %v", path, k, got)
		wm, wIsMap := w.(map[string]any)
		gm, gIsMap := g.(map[string]any)
		if wIsMap && gIsMap {
			requireSubset(t, wm, gm, path+k+".")
			continue
		}
		require.Equal(t, w, g, "%s%s", path, k)
	}
}

// TestProtobufErrors: every malformed body is a 400 that says what was wrong, in
// the real server's words where it has them, with the field and byte offset.
func TestProtobufErrors(t *testing.T) {
	h := simkit.Start(t, sim.Options{MaxRequestBytes: 1 << 16})
	const cms = "/api/v1/namespaces/demo/configmaps"
	deep := []byte{}
	for range 40 {
		deep = append(deep, 0xcb, 0x06) // start group, field 105
	}
	// 20000 empty container statuses, 40 KB of protobuf, would be 1.8 MB of JSON:
	// {"name":"","state":{},"lastState":{},"ready":false,...} each.
	empties := bytes.Repeat(pbBytes(8), 20000)
	tests := []struct {
		name, path string
		body       []byte
		code       int
		want       string
	}{
		{"empty", cms, []byte{}, 400, "the object provided is unrecognized (must be of type ConfigMap): empty data (<empty>)"},
		{"no magic", cms, []byte(`{"kind":"ConfigMap"}`), 400,
			`provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({"kind":"ConfigMap"})`},
		{"magic only", cms, []byte("k8s\x00"), 400, "empty body (6b387300)"},
		{"truncated envelope", cms, []byte("k8s\x00\x0a\x0f\x0a"), 400, "unexpected EOF: a length of 15 runs past the end of its message (byte 5) (6b3873000a0f0a)"},
		{"trailing zero bytes", cms, append(pbBody("v1", "ConfigMap", pbMeta("x")), 0, 0), 400,
			"proto: Unknown: illegal tag 0 (wire type 0)"},
		{"wrong wire type", cms, pbBody("v1", "ConfigMap", pbBytes(1, pbVarint(1, 5))), 400,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: proto: wrong wireType = 0 (field metadata.name, byte 25)`},
		{"length past the end", cms, pbBody("v1", "ConfigMap", pbMeta("x"), []byte{0x12, 0xff, 0xff, 0x03}), 400,
			"unexpected EOF: a length of 65535 runs past the end of its message (field data, byte 29)"},
		{"varint overflow", cms, pbBody("v1", "ConfigMap", pbBytes(1, append([]byte{0x38}, bytes.Repeat([]byte{0xff}, 11)...))), 400,
			"proto: integer overflow (field metadata.generation, byte 26)"},
		{"illegal wire type", cms, pbBody("v1", "ConfigMap", pbMeta("x"), []byte{0x4e}), 400, "proto: illegal wireType 6"},
		{"bad map entry", cms, pbBody("v1", "ConfigMap", pbMeta("x"), pbBytes(2, pbVarint(2, 1))), 400,
			"proto: wrong wireType = 0 for map entry field 2 (field data[0], byte"},
		{"groups nested too deep", cms, pbBody("v1", "ConfigMap", pbMeta("x"), deep), 400, "proto: groups nested deeper than 32"},
		{"bad quantity", "/api/v1/namespaces/demo/pods", pbBody("v1", "Pod", pbMeta("p"), pbBytes(2, pbBytes(2, pbStr(1, "c"),
			pbBytes(8, pbEntry(1, "cpu", pbBytes(2, pbStr(1, "abc"))))))), 400,
			`Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression`},
		{"impossible int-or-string", "/apis/apps/v1/namespaces/demo/deployments", pbBody("apps/v1", "Deployment", pbMeta("d"),
			pbBytes(2, pbBytes(4, pbBytes(2, pbBytes(2, pbVarint(1, 7)))))), 400,
			"impossible IntOrString.Type 7 (0 is an int, 1 a string) (field spec.strategy.rollingUpdate.maxSurge"},
		{"fieldsV1 not JSON", cms, pbBody("v1", "ConfigMap", pbBytes(1, pbStr(1, "x"), pbBytes(17, pbBytes(7, pbBytes(1, []byte("{")))))), 400,
			"raw bytes are not JSON (the simulator reads no other embedded encoding) (field metadata.managedFields[0].fieldsV1"},
		{"JSON too large", "/api/v1/namespaces/demo/pods", pbBody("v1", "Pod", pbMeta("p"), pbBytes(3, empties)), 400,
			"the object's JSON would exceed"},
		{"another built-in kind", cms, pbBody("v1", "Pod", pbMeta("x")), 400,
			`Pod in version "v1" cannot be handled as a ConfigMap: converting (v1.Pod) to (core.ConfigMap): unknown conversion`},
		{"an unknown kind", cms, pbBody("v1", "Widget", pbMeta("x")), 400,
			`Widget in version "v1" cannot be handled as a ConfigMap: no kind "Widget" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"`},
		{"an unknown version", "/api/v1/namespaces", pbBody("apps1", "Namespace", pbMeta("x")), 400,
			`Namespace in version "apps1" cannot be handled as a Namespace: no kind "Namespace" is registered for version "apps1"`},
		{"too large", cms, pbBody("v1", "ConfigMap", pbMeta("x"), pbEntry(2, "a", pbStr(2, strings.Repeat("x", 1<<16)))), 413,
			"Request entity too large: limit is 65536 bytes (Options.MaxRequestBytes)"},
		{"no name", cms, pbBody("v1", "ConfigMap"), 422, "metadata.name: Required value: name or generateName is required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := postPB(t, h, "POST", tc.path, tc.body)
			require.Equal(t, tc.code, code, "%s", body)
			st := decodeMap(t, body)
			require.Contains(t, st["message"], tc.want)
			if code == 400 {
				require.Equal(t, "BadRequest", st["reason"])
			}
		})
	}
	_, snap, err := h.Server.Snapshot("configmaps")
	require.NoError(t, err)
	require.Empty(t, snap, "no malformed body stored anything")
}

// TestProtobufUnsupported: a kind the table lacks (a custom resource) keeps 415, and
// the 415 for other media types names protobuf where it is accepted.
func TestProtobufUnsupported(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	require.NoError(t, h.Server.RegisterResource(sim.ResourceInfo{Group: "example.com", Version: "v1",
		Resource: "widgets", Kind: "Widget", Namespaced: true}))
	code, body := postPB(t, h, "POST", "/apis/example.com/v1/namespaces/demo/widgets",
		pbBody("example.com/v1", "Widget", pbMeta("w")))
	require.Equal(t, 415, code, "%s", body)
	require.Contains(t, string(body), "accepted media types include: application/json, application/yaml (got")
	code, body = do(t, h, "POST", "/api/v1/namespaces/demo/configmaps", "", []byte{0xa0}, "Content-Type", "application/cbor")
	require.Equal(t, 415, code, "%s", body)
	require.Contains(t, string(body), "application/json, application/yaml, application/vnd.kubernetes.protobuf (got")
	code, body = do(t, h, "PATCH", "/api/v1/namespaces/demo/configmaps/x", "", pbBody("v1", "ConfigMap", pbMeta("x")),
		"Content-Type", ctProtobuf)
	require.Equal(t, 415, code, "a patch is never protobuf: %s", body)
}

// FuzzProtobufBody: no body panics the decoder, and one that decodes gives one JSON
// object naming its kind, within the documented bound.
func FuzzProtobufBody(f *testing.F) {
	for _, b := range [][]byte{
		pbBody("v1", "ConfigMap", pbMeta("x", "a", "b"), pbEntry(2, "a", pbStr(2, "b")), pbEntry(3, "bin", pbBytes(2, []byte{0}))),
		pbBody("v1", "Namespace", pbMeta("demo"), pbBytes(2, pbStr(1, "kubernetes"))),
		pbBody("apps/v1", "Deployment", pbMeta("web"), pbBytes(2, pbVarint(1, 1), pbBytes(3, pbBytes(2, pbBytes(2, pbStr(1, "c")))),
			pbBytes(4, pbBytes(2, pbBytes(1, pbVarint(1, 1), pbStr(3, "25%")))))),
		pbBody("v1", "Pod", pbMeta("p"), pbBytes(2, pbBytes(2, pbStr(1, "c"), pbBytes(8, pbEntry(1, "cpu", pbBytes(2, pbStr(1, "100m"))))),
			pbBytes(14, pbBytes(4, []byte{1, 2, 3})))),
		pbBody("coordination.k8s.io/v1", "Lease", pbMeta("l"), pbBytes(2, pbBytes(2, pbVarint(1, 1), pbVarint(2, 5)))),
		pbBody("v1", "Secret", pbMeta("s"), pbEntry(2, "a", pbStr(2, "b")), pbStr(3, "Opaque")),
		pbBody("v1", "Event", pbBytes(1, pbStr(1, "e"), pbBytes(17, pbBytes(7, pbBytes(1, []byte(`{"f:a":{}}`)))))),
		[]byte("k8s\x00"), []byte("k8s\x00\x0a\x0f\x0a"), {},
	} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out, err := sim.ProtobufToJSON(body)
		if err != nil {
			var se *sim.StatusError
			if !errors.As(err, &se) || se.Code() != 400 || se.Status.Message == "" {
				t.Fatalf("error %v is not a 400 StatusError with a message", err)
			}
			return
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("invalid JSON %q: %v", out, err)
		}
		if k, _ := m["kind"].(string); k == "" {
			t.Fatalf("no kind in %s", out)
		}
		// The bound is checked after each field, so the last one (a string of
		// control characters, 6 bytes of JSON each) may pass it.
		if len(out) > 22*len(body)+64<<10+256 {
			t.Fatalf("%d bytes of JSON from %d of protobuf", len(out), len(body))
		}
	})
}

// TestProtobufRegisteredBuiltin: a built-in kind outside the core and apps
// groups (leases, served by default for leader election) reads protobuf.
func TestProtobufRegisteredBuiltin(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	code, body := postPB(t, h, "POST", "/apis/coordination.k8s.io/v1/namespaces/demo/leases", pbBody("coordination.k8s.io/v1", "Lease",
		pbMeta("leader"), pbBytes(2, pbStr(1, "pod-a"), pbVarint(2, 15), pbBytes(4, pbVarint(1, 1764590691), pbVarint(2, 5000)))))
	require.Equal(t, 201, code, "%s", body)
	require.Equal(t, map[string]any{"holderIdentity": "pod-a", "leaseDurationSeconds": float64(15),
		"renewTime": "2025-12-01T12:04:51.000005Z"}, decodeMap(t, body)["spec"], "renewTime is a MicroTime: microseconds")
}

// BenchmarkProtobufToJSON decodes the body kubectl sends for a small deployment.
func BenchmarkProtobufToJSON(b *testing.B) {
	body := pbBody("apps/v1", "Deployment", pbMeta("web", "app", "web"),
		pbBytes(2, pbVarint(1, 1), pbBytes(2, pbEntry(1, "app", pbStr(2, "web"))),
			pbBytes(3, pbMeta("", "app", "web"), pbBytes(2, pbBytes(2, pbStr(1, "nginx"), pbStr(2, "nginx"),
				pbBytes(8, pbEntry(1, "cpu", pbBytes(2, pbStr(1, "100m"))))))),
			pbBytes(4)),
		pbBytes(3))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := sim.ProtobufToJSON(body); err != nil {
			b.Fatal(err)
		}
	}
}
