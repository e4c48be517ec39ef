package sim_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// fixedClock is a clock at one instant, so that managedFields times are known.
func fixedClock() time.Time { return time.Date(2026, 12, 1, 12, 3, 40, 0, time.UTC) }

const applyCT = "application/apply-patch+yaml"

// managedOf returns an object's managedFields as compact JSON.
func managedOf(t *testing.T, body []byte) string {
	t.Helper()
	var o struct {
		Metadata struct {
			ManagedFields json.RawMessage `json:"managedFields"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(body, &o), "%s", body)
	return string(o.Metadata.ManagedFields)
}

// TestApplyConflictForceAndPrune replays a sequence run against the real server
// (kube-apiserver v1.37.2) and compares every answer with what it gave.
func TestApplyConflictForceAndPrune(t *testing.T) {
	h := simkit.Start(t, sim.Options{Clock: fixedClock})
	const path = "/api/v1/namespaces/p/configmaps/s1"
	apply := func(manager, query, body string) (int, []byte) {
		return do(t, h, "PATCH", path+"?fieldManager="+manager+query, "", []byte(body), "Content-Type", applyCT)
	}
	const ts = `"time":"2026-12-01T12:03:40Z"`
	entry := func(manager, fields string) string {
		return `{"manager":"` + manager + `","operation":"Apply","apiVersion":"v1",` + ts + `,"fieldsType":"FieldsV1","fieldsV1":` + fields + `}`
	}

	code, body := apply("mgr-a", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s1"},"data":{"a":"1","b":"x"}}`)
	require.Equal(t, 201, code, "apply creates: %s", body)
	require.Equal(t, "["+entry("mgr-a", `{"f:data":{"f:a":{},"f:b":{}}}`)+"]", managedOf(t, body))

	code, body = apply("mgr-b", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s1"},"data":{"a":"2"}}`)
	require.Equal(t, 409, code)
	require.JSONEq(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
		"message":"Apply failed with 1 conflict: conflict with \"mgr-a\": .data.a","reason":"Conflict",
		"details":{"causes":[{"reason":"FieldManagerConflict","message":"conflict with \"mgr-a\"","field":".data.a"}]},"code":409}`, string(body))

	code, body = apply("mgr-b", "&force=true", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s1"},"data":{"a":"2"}}`)
	require.Equal(t, 200, code, "%s", body)
	require.Equal(t, "["+entry("mgr-a", `{"f:data":{"f:b":{}}}`)+","+entry("mgr-b", `{"f:data":{"f:a":{}}}`)+"]", managedOf(t, body))
	rv := decodeMap(t, body)["metadata"].(map[string]any)["resourceVersion"]

	code, body = apply("mgr-a", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s1"},"data":{"b":"x"}}`)
	require.Equal(t, 200, code)
	require.Equal(t, rv, decodeMap(t, body)["metadata"].(map[string]any)["resourceVersion"], "a no-op apply keeps the RV")

	code, body = apply("mgr-a", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s1"},"data":{}}`)
	require.Equal(t, 200, code)
	require.Equal(t, map[string]any{"a": "2"}, decodeMap(t, body)["data"], "b, applied by mgr-a only, is gone")
	require.Equal(t, "["+entry("mgr-a", `{"f:data":{}}`)+","+entry("mgr-b", `{"f:data":{"f:a":{}}}`)+"]", managedOf(t, body))
}

// TestApplySharedOwnership: a second applier of the same value shares the field
// (its entry, which changed nothing, has no time, and sorts first); when the
// first stops applying it, the field stays, owned by the second.
func TestApplySharedOwnership(t *testing.T) {
	h := simkit.Start(t, sim.Options{Clock: fixedClock})
	const path = "/api/v1/namespaces/p/configmaps/sh1"
	apply := func(manager, body string) []byte {
		code, b := do(t, h, "PATCH", path+"?fieldManager="+manager, "", []byte(body), "Content-Type", applyCT)
		require.Less(t, code, 300, "%s", b)
		return b
	}
	apply("mgr-a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"sh1"},"data":{"a":"1","b":"2"}}`)
	body := apply("mgr-b", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"sh1"},"data":{"a":"1"}}`)
	require.Equal(t, `[{"manager":"mgr-b","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}},`+
		`{"manager":"mgr-a","operation":"Apply","apiVersion":"v1","time":"2026-12-01T12:03:40Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{},"f:b":{}}}}]`,
		managedOf(t, body))
	body = apply("mgr-a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"sh1"}}`)
	require.Equal(t, map[string]any{"a": "1"}, decodeMap(t, body)["data"])
	require.Equal(t, `[{"manager":"mgr-b","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}]`,
		managedOf(t, body), "mgr-a owns nothing and loses its entry")
}

// TestApplyKeyedLists: containers merge by name and ports by containerPort and
// protocol (TCP when absent), and a conflict names the item by its key.
func TestApplyKeyedLists(t *testing.T) {
	h := simkit.Start(t, sim.Options{Clock: fixedClock})
	const path = "/apis/apps/v1/namespaces/p/deployments/ad"
	apply := func(manager, body string) (int, []byte) {
		return do(t, h, "PATCH", path+"?fieldManager="+manager, "", []byte(body), "Content-Type", applyCT)
	}
	code, body := apply("mgr-a", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"ad","labels":{"x":"1"}},"spec":{"replicas":2,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}]}}}}`)
	require.Equal(t, 201, code, "%s", body)
	require.Equal(t, `[{"manager":"mgr-a","operation":"Apply","apiVersion":"apps/v1","time":"2026-12-01T12:03:40Z","fieldsType":"FieldsV1","fieldsV1":`+
		`{"f:metadata":{"f:labels":{"f:x":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:a":{}}},`+
		`"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}}}}]`,
		managedOf(t, body))

	code, body = apply("mgr-b", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"ad"},"spec":{"template":{"spec":{"containers":[{"name":"side","image":"s"}]}}}}`)
	require.Equal(t, 200, code, "%s", body)
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct{ Name, Image string } `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	require.NoError(t, json.Unmarshal(body, &d))
	require.Len(t, d.Spec.Template.Spec.Containers, 2, "a second applier's container is added, not a replacement")
	require.Equal(t, "c", d.Spec.Template.Spec.Containers[0].Name)
	require.Equal(t, "side", d.Spec.Template.Spec.Containers[1].Name)

	code, body = apply("mgr-b", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"ad"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"other"}]}}}}`)
	require.Equal(t, 409, code)
	st := decodeMap(t, body)
	require.Equal(t, `Apply failed with 1 conflict: conflict with "mgr-a": .spec.template.spec.containers[name="c"].image`, st["message"])
}

// TestApplyErrors: the real server's answers to bad applies.
func TestApplyErrors(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"p","name":"c1"}}`))
	require.NoError(t, err)
	tests := []struct {
		name, query, body string
		code              int
		msg               string
	}{
		{"no field manager", "", `{"apiVersion":"v1","kind":"ConfigMap"}`, 422,
			`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`},
		{"wrong kind", "?fieldManager=x", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c1"}}`, 400,
			"invalid object type: /v1, Kind=Secret"},
		{"no kind", "?fieldManager=x", `{"data":{"a":"1"}}`, 400, "invalid object type: /, Kind="},
		{"other name", "?fieldManager=x", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}}`, 400,
			"the name of the object (other) does not match the name on the URL (c1)"},
		{"other namespace", "?fieldManager=x", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","namespace":"o"}}`, 400,
			"the namespace of the provided object does not match the namespace sent on the request"},
		{"managedFields", "?fieldManager=x", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","managedFields":[{"manager":"q"}]}}`, 400,
			"metadata.managedFields must be nil"},
		{"stale resourceVersion", "?fieldManager=x", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","resourceVersion":"1"}}`, 409,
			`Operation cannot be fulfilled on configmaps "c1": the object has been modified; please apply your changes to the latest version and try again`},
		{"bad dryRun", "?fieldManager=x&dryRun=Foo", `{"apiVersion":"v1","kind":"ConfigMap"}`, 422,
			`PatchOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Foo"]: supported values: "All"`},
		{"long manager", "?fieldManager=" + string(make128m()), `{"apiVersion":"v1","kind":"ConfigMap"}`, 422,
			`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes`},
		{"bad YAML", "?fieldManager=x", `{bad`, 400, ""},
		{"key missing", "?fieldManager=x", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","ownerReferences":[{"name":"x"}]}}`, 400, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(t, h, "PATCH", "/api/v1/namespaces/p/configmaps/c1"+tc.query, "", []byte(tc.body), "Content-Type", applyCT)
			require.Equal(t, tc.code, code, "%s", body)
			if tc.msg != "" {
				require.Equal(t, tc.msg, decodeMap(t, body)["message"])
			}
		})
	}
	code, body := do(t, h, "PATCH", "/api/v1/namespaces/p/configmaps/c1?force=true", "", []byte(`{}`), "Content-Type", "application/merge-patch+json")
	require.Equal(t, 422, code)
	require.Equal(t, `PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`, decodeMap(t, body)["message"])
}

func make128m() []byte {
	b := make([]byte, 129)
	for i := range b {
		b[i] = 'm'
	}
	return b
}
