package decode

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/internal/pbwire"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// captures holds the wire captures of a real kube-apiserver.
const captures = "../../testdata/real-apiserver"

// kubeObject is an object of k8s.io/api: one the watch package decodes,
// with its generated protobuf Marshal.
type kubeObject interface {
	watch.Object
	Marshal() ([]byte, error)
}

// sample is one object body to decode, in JSON as given.
type sample struct {
	what             string // where it comes from, for failure messages
	apiVersion, kind string
	json             []byte
}

// checks decode a sample of each kind the test knows both ways.
var checks = map[string]func(*testing.T, []*kube.Client, sample){
	"Pod":                   requireAgreeOnJSON[corev1.Pod],
	"Namespace":             requireAgreeOnJSON[corev1.Namespace],
	"ConfigMap":             requireAgreeOnJSON[corev1.ConfigMap],
	"Secret":                requireAgreeOnJSON[corev1.Secret],
	"Deployment":            requireAgreeOnJSON[appsv1.Deployment],
	"Lease":                 requireAgreeOnJSON[coordinationv1.Lease],
	"PartialObjectMetadata": requireAgreeOnJSON[metav1.PartialObjectMetadata],
}

// TestDecodeObjectAliasingOnCaptures: every object of a known kind in the
// real API server's captures (lists' items, watch events, tables' rows,
// webhook reviews, stored objects), as captured in JSON and re-encoded in
// protobuf, decodes with DecodeObjectAliasing into what DecodeObject
// decodes, until the body is overwritten (requireAgree).
func TestDecodeObjectAliasingOnCaptures(t *testing.T) {
	cs := clients(t)
	seen := map[string]int{}
	for _, s := range captured(t) {
		check, ok := checks[s.kind]
		if !ok {
			continue
		}
		check(t, cs, s)
		seen[s.kind]++
	}
	for kind := range checks {
		require.Positive(t, seen[kind], "the captures hold a %s", kind)
	}
	t.Logf("objects by kind: %v", seen)
}

// TestDecodeObjectAliasingOnHarnessPods: the benchmark's pods, in
// protobuf and JSON, decode alike both ways.
func TestDecodeObjectAliasingOnHarnessPods(t *testing.T) {
	cs := clients(t)
	for i, msg := range harnessPods(t, 64) {
		p := unmarshalPod(t, msg)
		requireAgreeOn(t, cs, sample{what: fmt.Sprintf("harness pod %d", i), apiVersion: "v1", kind: "Pod", json: marshalJSON(t, p)}, p)
	}
}

// TestDecodeObjectAliasingOnRandomPods: pods filled at random (filler, a
// fixed seed: every field, maps absent, empty or full), with empty, long,
// unicode and invalid UTF-8 strings in their metadata (JSON sends U+FFFD
// for the last), decode alike both ways in protobuf and JSON.
func TestDecodeObjectAliasingOnRandomPods(t *testing.T) {
	cs := clients(t)
	f := filler(1)
	for i := range 120 {
		p := &corev1.Pod{}
		f.Fill(p)
		oddMeta(p, i)
		requireAgreeOn(t, cs, sample{what: fmt.Sprintf("random pod %d", i), apiVersion: "v1", kind: "Pod", json: podJSON(t, p)}, p)
	}
}

// clients are one client that interns protobuf strings and one that does
// not.
func clients(t *testing.T) []*kube.Client {
	t.Helper()
	var cs []*kube.Client
	for _, noIntern := range []bool{false, true} {
		cfg := &kube.Config{Host: "http://127.0.0.1:1"}
		cfg.Encoding.NoProtobufIntern = noIntern
		c, err := kube.NewClient(cfg)
		require.NoError(t, err)
		cs = append(cs, c)
	}
	return cs
}

// requireAgreeOnJSON is requireAgreeOn of s and the E it decodes into.
func requireAgreeOnJSON[E any, T interface {
	*E
	kubeObject
}](t *testing.T, cs []*kube.Client, s sample) {
	t.Helper()
	obj := T(new(E))
	require.NoError(t, json.Unmarshal(s.json, obj), s.what)
	requireAgreeOn(t, cs, s, obj)
}

// requireAgreeOn checks, through each client, s's JSON and obj (what it
// holds) in protobuf as obj's Marshal encodes it (requireAgree).
func requireAgreeOn[T kubeObject](t *testing.T, cs []*kube.Client, s sample, obj T) {
	t.Helper()
	msg, err := obj.Marshal()
	require.NoError(t, err, s.what)
	pb := pbwire.Wrap(nil, s.apiVersion, s.kind, msg)
	for _, c := range cs {
		requireAgree[T](t, c, s.json, kube.ContentTypeJSON, s.what+" in JSON")
		requireAgree[T](t, c, pb, kube.ContentTypeProtobuf, s.what+" in protobuf")
	}
}

// requireAgree decodes a copy of body with DecodeObject and
// DecodeObjectAliasing and requires equal objects; then overwrites the
// copy and requires the copying object to still equal a fresh decoding
// of body, and the aliasing one to equal it only if it decoded JSON
// (copied always): in protobuf its strings are the body's bytes.
func requireAgree[T watch.Object](t *testing.T, c *kube.Client, body []byte, contentType, what string) {
	t.Helper()
	b := bytes.Clone(body)
	copied, err := watch.DecodeObject[T](c, b, contentType)
	require.NoError(t, err, what)
	aliased, err := watch.DecodeObjectAliasing[T](c, b, contentType)
	require.NoError(t, err, what)
	require.Equal(t, copied, aliased, "%s: DecodeObjectAliasing decodes what DecodeObject decodes", what)

	overwrite(b)
	want, err := watch.DecodeObject[T](c, body, contentType)
	require.NoError(t, err, what)
	require.Equal(t, want, copied, "%s: DecodeObject's object does not change with the body", what)
	if kube.IsProtobuf(contentType) {
		require.False(t, reflect.DeepEqual(want, aliased), "%s: DecodeObjectAliasing's strings are the body's bytes", what)
	} else {
		require.Equal(t, want, aliased, "%s: JSON is decoded by copying", what)
	}
}

// overwrite fills b with a byte no valid string holds.
func overwrite(b []byte) {
	for i := range b {
		b[i] = 0xff
	}
}

// captured returns the objects in the captures' JSON: whole files, JSON
// lines, and the JSON lines of a raw HTTP capture.
func captured(t *testing.T) []sample {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(captures, "*"))
	require.NoError(t, err)
	var out []sample
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		name := filepath.Base(f)
		switch filepath.Ext(f) {
		case ".json":
			out = walkJSON(out, name, b, "", "")
		case ".jsonl", ".txt":
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, len(b)+1)
			for line := 1; sc.Scan(); line++ {
				if l := bytes.TrimSpace(sc.Bytes()); bytes.HasPrefix(l, []byte("{")) {
					out = walkJSON(out, fmt.Sprintf("%s:%d", name, line), bytes.Clone(l), "", "")
				}
			}
		}
	}
	require.NotEmpty(t, out, "objects in %s", captures)
	return out
}

// walkJSON appends to out every object with a kind and metadata found in
// the JSON value b: at the top, or nested in any object or array (a
// table's rows, a watch event, a webhook review). A list's items
// take their kind and apiVersion from the list when they name none. What
// is not JSON is skipped: a capture's lines need not all be.
func walkJSON(out []sample, what string, b []byte, apiVersion, kind string) []sample {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.HasPrefix(b, []byte("[")):
		var items []json.RawMessage
		if json.Unmarshal(b, &items) != nil {
			return out
		}
		for i, item := range items {
			out = walkJSON(out, fmt.Sprintf("%s[%d]", what, i), item, apiVersion, kind)
		}
	case bytes.HasPrefix(b, []byte("{")):
		var fields map[string]json.RawMessage
		if json.Unmarshal(b, &fields) != nil {
			return out
		}
		var k, v string
		if json.Unmarshal(fields["kind"], &k) == nil && k != "" {
			kind, apiVersion = k, ""
			_ = json.Unmarshal(fields["apiVersion"], &apiVersion)
		}
		if _, ok := fields["metadata"]; ok && kind != "" && !strings.HasSuffix(kind, "List") {
			out = append(out, sample{what: what, apiVersion: apiVersion, kind: kind, json: b})
		}
		for _, key := range slices.Sorted(maps.Keys(fields)) {
			val := fields[key]
			v, k = "", ""
			if key == "items" && strings.HasSuffix(kind, "List") {
				v, k = apiVersion, strings.TrimSuffix(kind, "List")
			}
			out = walkJSON(out, what+"."+key, val, v, k)
		}
	}
	return out
}

// unmarshalPod decodes a pod's protobuf message.
func unmarshalPod(t *testing.T, msg []byte) *corev1.Pod {
	t.Helper()
	p := new(corev1.Pod)
	require.NoError(t, p.Unmarshal(msg))
	return p
}

func marshalJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// podJSON is p in JSON, with labels and annotations sent as {} when p has
// them empty rather than absent (encoding/json leaves empty maps out).
func podJSON(t *testing.T, p *corev1.Pod) []byte {
	t.Helper()
	b := marshalJSON(t, p)
	if (p.Labels == nil || len(p.Labels) > 0) && (p.Annotations == nil || len(p.Annotations) > 0) {
		return b
	}
	var pod map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &pod))
	var meta map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(pod["metadata"], &meta))
	if p.Labels != nil && len(p.Labels) == 0 {
		meta["labels"] = json.RawMessage("{}")
	}
	if p.Annotations != nil && len(p.Annotations) == 0 {
		meta["annotations"] = json.RawMessage("{}")
	}
	pod["metadata"] = marshalJSON(t, meta)
	return marshalJSON(t, pod)
}

// oddStrings are values that a field's encoding might trip on: empty,
// lengths past one and two bytes of varint, multi-byte and combining
// runes, a NUL and bytes that are not UTF-8.
var oddStrings = []string{
	"", "a", "ünïcödé", "日本語のラベル", "🚀✓", "e\u0301", "nul\x00byte", "\xff\xfe not UTF-8",
	strings.Repeat("long-", 40), strings.Repeat("x", 1<<14) + "é",
}

// oddMeta gives p, filled at random (filler), what the filler does not
// make: its type left to the envelope, no managed fields (the filler's
// are not JSON), and one of oddStrings, by i, in its name, a label's key
// and an annotation's value.
func oddMeta(p *corev1.Pod, i int) {
	p.TypeMeta, p.ManagedFields = metav1.TypeMeta{}, nil
	odd := oddStrings[i%len(oddStrings)]
	p.Name = odd
	if p.Labels != nil {
		p.Labels[odd] = "v"
	}
	if p.Annotations != nil {
		p.Annotations["k"] = odd
	}
}
