package diff

import (
	"encoding/json"
	"github.com/kwatch/kwatch/internal/jsonpatch"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	m, err := Decode([]byte(s))
	require.NoError(t, err, "%s", s)
	return m
}

func lines(cs []Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}

const deployV1 = `{"metadata":{"name":"web","resourceVersion":"10","generation":1,"uid":"u1",
	"labels":{"app":"web","app.kubernetes.io/name":"shop"},
	"managedFields":[{"manager":"kubectl","time":"2025-01-01T00:00:00Z"}]},
	"spec":{"replicas":3,"template":{"spec":{"containers":[
		{"name":"web","image":"nginx:1.27","args":["-a","-b"]},
		{"name":"sidecar","image":"busybox:1.36"}]}}},
	"status":{"phase":"Pending","observedGeneration":1,"conditions":[{"type":"Ready","status":"False"}]}}`

func TestCompare(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		opts     Options
		want     []string
	}{
		{"nested maps", `{"spec":{"replicas":3,"strategy":{"type":"RollingUpdate"}}}`,
			`{"spec":{"replicas":5,"strategy":{"type":"Recreate"}}}`, Options{},
			[]string{"spec.replicas: 3 → 5", "spec.strategy.type: RollingUpdate → Recreate"}},
		{"a field added and one removed", `{"metadata":{"labels":{"tier":"front"}},"spec":{"paused":true}}`,
			`{"metadata":{"labels":{"app":"web"}},"spec":{}}`, Options{},
			[]string{"metadata.labels.app: (added) web", "metadata.labels.tier: (removed) front", "spec.paused: (removed) true"}},
		{"a key that is not a plain word", `{"metadata":{"labels":{}}}`, `{"metadata":{"labels":{"app.kubernetes.io/name":"shop"}}}`, Options{},
			[]string{`metadata.labels["app.kubernetes.io/name"]: (added) shop`}},
		{"containers matched by name, whatever their order",
			`{"spec":{"containers":[{"name":"web","image":"nginx:1.27"},{"name":"sidecar","image":"busybox:1.36"}]}}`,
			`{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.37"},{"name":"web","image":"nginx:1.28"}]}}`, Options{},
			[]string{"spec.containers[name=sidecar].image: busybox:1.36 → busybox:1.37", "spec.containers[name=web].image: nginx:1.27 → nginx:1.28"}},
		{"a container added and one removed",
			`{"spec":{"containers":[{"name":"web","image":"a"},{"name":"old","image":"b"}]}}`,
			`{"spec":{"containers":[{"name":"web","image":"a"},{"name":"new","image":"c"}]}}`, Options{},
			[]string{`spec.containers[name=new]: (added) {"image":"c","name":"new"}`, `spec.containers[name=old]: (removed) {"image":"b","name":"old"}`}},
		{"conditions matched by type", `{"status":{"conditions":[{"type":"Ready","status":"False"},{"type":"Scheduled","status":"True"}]}}`,
			`{"status":{"conditions":[{"type":"Scheduled","status":"True"},{"type":"Ready","status":"True"}]}}`, Options{},
			[]string{"status.conditions[type=Ready].status: False → True"}},
		{"a list without keys, by position", `{"spec":{"args":["-a","-b","-c"]}}`, `{"spec":{"args":["-a","-x"]}}`, Options{},
			[]string{"spec.args[1]: -b → -x", "spec.args[2]: (removed) -c"}},
		{"a list of objects without a unique key", `{"spec":{"tolerations":[{"key":"a","effect":"NoSchedule"},{"key":"a","effect":"NoExecute"}]}}`,
			`{"spec":{"tolerations":[{"key":"a","effect":"NoSchedule"},{"key":"a","effect":"NoExecute"},{"key":"b"}]}}`, Options{},
			[]string{`spec.tolerations[2]: (added) {"key":"b"}`}},
		{"a value of another type", `{"spec":{"x":{"a":1}}}`, `{"spec":{"x":[1]}}`, Options{}, []string{`spec.x: {"a":1} → [1]`}},
		{"strings that would read as other values are quoted", `{"data":{"a":"5","b":"","c":"x"}}`, `{"data":{"a":"true","b":" x","c":"a → b"}}`, Options{},
			[]string{`data.a: "5" → "true"`, `data.b: "" → " x"`, `data.c: x → "a → b"`}},
		{"noise left out", deployV1, `{"metadata":{"name":"web","resourceVersion":"11","generation":2,"uid":"u1",
			"labels":{"app":"web","app.kubernetes.io/name":"shop"},
			"managedFields":[{"manager":"kubectl","time":"2025-01-01T00:01:00Z"}]},
			"spec":{"replicas":5,"template":{"spec":{"containers":[
				{"name":"web","image":"nginx:1.28","args":["-a","-b"]},
				{"name":"sidecar","image":"busybox:1.36"}]}}},
			"status":{"phase":"Running","observedGeneration":2,"conditions":[{"type":"Ready","status":"False"}]}}`, Options{},
			[]string{"spec.replicas: 3 → 5", "spec.template.spec.containers[name=web].image: nginx:1.27 → nginx:1.28", "status.phase: Pending → Running"}},
		{"noise kept when asked", `{"metadata":{"resourceVersion":"10","generation":1}}`, `{"metadata":{"resourceVersion":"11","generation":2}}`,
			Options{Noise: true}, []string{"metadata.generation: 1 → 2", `metadata.resourceVersion: "10" → "11"`}},
		{"the same object", deployV1, deployV1, Options{Noise: true}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lines(Compare(decode(t, tt.old), decode(t, tt.new), tt.opts))
			require.Equal(t, tt.want, got)
		})
	}
}

// TestCompareReplacedObject: after a relist, an object deleted and created
// again under the same name is compared with the version printed before
// it, field by field, as any other change: its uid is new, fields it no
// longer has are removed.
func TestCompareReplacedObject(t *testing.T) {
	old := decode(t, deployV1)
	repl := decode(t, `{"metadata":{"name":"web","resourceVersion":"90","generation":1,"uid":"u2"},
		"spec":{"replicas":1,"template":{"spec":{"containers":[{"name":"app","image":"httpd:2"}]}}}}`)
	got := lines(Compare(old, repl, Options{}))
	require.Equal(t, []string{
		`metadata.labels: (removed) {"app":"web","app.kubernetes.io/name":"shop"}`,
		"metadata.uid: u1 → u2",
		"spec.replicas: 3 → 1",
		`spec.template.spec.containers[name=app]: (added) {"image":"httpd:2","name":"app"}`,
		`spec.template.spec.containers[name=web]: (removed) {"args":["-a","-b"],"image":"nginx:1.27","name":"web"}`,
		`spec.template.spec.containers[name=sidecar]: (removed) {"image":"busybox:1.36","name":"sidecar"}`,
		`status: (removed) {"conditions":[{"status":"False","type":"Ready"}],"observedGeneration":1,"phase":"Pending"}`,
	}, got)
	requirePatchReplays(t, old, repl)
}

func TestValue(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{"Running", "Running"},
		{"nginx:1.27", "nginx:1.27"},
		{"", `""`},
		{"null", `"null"`},
		{"{x", `"{x"`},
		{"(added) x", `"(added) x"`},
		{"a\nb", `"a\nb"`},
		{"\x1b[31mred", `"\u001b[31mred"`},
		{"csi\u009b2J", `"csi\u009b2J"`},
		{json.Number("3"), "3"},
		{true, "true"},
		{nil, "null"},
		{map[string]any{"b": "<x>", "a": json.Number("1")}, `{"a":1,"b":"<x>"}`},
		{strings.Repeat("x", 250), strings.Repeat("x", 200) + "… (50 more characters)"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, Value(tt.in), "Value(%q)", tt.in)
	}
}

func TestFormatPaints(t *testing.T) {
	c := Change{Path: "spec.replicas", Op: Changed, Old: json.Number("3"), New: json.Number("5")}
	require.Equal(t, "spec.replicas: \x1b[31m3\x1b[0m → \x1b[32m5\x1b[0m", c.Format(ANSI))
	a := Change{Path: "metadata.labels.app", Op: Added, New: "web"}
	require.Equal(t, "metadata.labels.app: \x1b[2m(added)\x1b[0m \x1b[32mweb\x1b[0m", a.Format(ANSI))
}

func requirePatchReplays(t *testing.T, old, new map[string]any) {
	t.Helper()
	ops := jsonpatch.Diff(old, new)
	b, err := json.Marshal(ops)
	require.NoError(t, err)
	var printed []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	require.NoError(t, json.Unmarshal(b, &printed))
	replay := make([]jsonpatch.Op, len(printed))
	for i, p := range printed {
		replay[i] = jsonpatch.Op{Op: p.Op, Path: p.Path}
		if p.Op != "remove" {
			v, err := Decode([]byte(`{"v":` + string(p.Value) + `}`))
			require.NoError(t, err)
			replay[i].Value = v["v"]
		}
	}
	got, err := jsonpatch.Apply(deepCopy(old), replay)
	require.NoError(t, err)
	require.Equal(t, new, got, "the patch %s applied to the old version", b)
}

func deepCopy(v map[string]any) map[string]any {
	b, _ := json.Marshal(v)
	m, _ := Decode(b)
	return m
}

func TestPatch(t *testing.T) {
	old := decode(t, deployV1)
	new := decode(t, `{"metadata":{"name":"web","resourceVersion":"11","generation":1,"uid":"u1",
		"labels":{"app":"web2","a/b~c":"x"}},
		"spec":{"replicas":5,"template":{"spec":{"containers":[
			{"name":"web","image":"nginx:1.28","args":["-a"]},
			{"name":"sidecar","image":"busybox:1.36"}]}}},
		"status":{"phase":null}}`)
	ops := jsonpatch.Diff(old, new)
	b, err := json.Marshal(ops)
	require.NoError(t, err)
	require.JSONEq(t, `[
		{"op":"add","path":"/metadata/labels/a~1b~0c","value":"x"},
		{"op":"replace","path":"/metadata/labels/app","value":"web2"},
		{"op":"remove","path":"/metadata/labels/app.kubernetes.io~1name"},
		{"op":"remove","path":"/metadata/managedFields"},
		{"op":"replace","path":"/metadata/resourceVersion","value":"11"},
		{"op":"replace","path":"/spec/replicas","value":5},
		{"op":"replace","path":"/spec/template/spec/containers/0/args","value":["-a"]},
		{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1.28"},
		{"op":"remove","path":"/status/conditions"},
		{"op":"remove","path":"/status/observedGeneration"},
		{"op":"replace","path":"/status/phase","value":null}]`, string(b))
	requirePatchReplays(t, old, new)
}

// TestPatchReplaysRandomChanges: for random edits of an object, the patch
// applied to the old version gives the new one, and Compare reports a
// change exactly when the versions differ.
func TestPatchReplaysRandomChanges(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 28))
	base := decode(t, deployV1)
	for i := range 500 {
		old := deepCopy(base)
		new := deepCopy(old)
		for range 1 + r.IntN(4) {
			mutate(r, new, 0)
		}
		requirePatchReplays(t, old, new)
		same := reflect.DeepEqual(old, new)
		require.Equal(t, same, len(Compare(old, new, Options{Noise: true})) == 0, "edit %d", i)
		base = new
	}
}

// mutate changes, adds or removes one field somewhere in m.
func mutate(r *rand.Rand, m map[string]any, depth int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	if len(keys) == 0 || r.IntN(5) == 0 {
		m["k"+strconv.Itoa(r.IntN(4))] = randomValue(r)
		return
	}
	k := keys[r.IntN(len(keys))]
	switch v := m[k].(type) {
	case map[string]any:
		if depth < 5 {
			mutate(r, v, depth+1)
			return
		}
	case []any:
		switch {
		case len(v) > 0 && r.IntN(3) == 0:
			m[k] = v[:len(v)-1]
		case r.IntN(2) == 0:
			m[k] = append(v, randomValue(r))
		case len(v) > 0:
			if e, ok := v[0].(map[string]any); ok {
				mutate(r, e, depth+1)
			} else {
				v[0] = randomValue(r)
			}
		}
		return
	}
	if r.IntN(3) == 0 {
		delete(m, k)
	} else {
		m[k] = randomValue(r)
	}
}

func randomValue(r *rand.Rand) any {
	switch r.IntN(5) {
	case 0:
		return json.Number(strconv.Itoa(r.IntN(10)))
	case 1:
		return map[string]any{"name": "n" + strconv.Itoa(r.IntN(3)), "v": "x"}
	case 2:
		return []any{"a", json.Number("1")}
	case 3:
		return nil
	}
	return "s" + strconv.Itoa(r.IntN(10))
}
