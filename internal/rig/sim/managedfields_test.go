package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// TestUpdateManagedFields: creates, updates and patches record an Update entry
// for their manager (fieldManager, else the User-Agent up to its first '/',
// else "unknown"), taking ownership of what they change, as the real server's
// answers to the same requests show.
func TestUpdateManagedFields(t *testing.T) {
	h := simkit.Start(t, sim.Options{Clock: fixedClock})
	const path = "/api/v1/namespaces/p/configmaps"
	entry := func(manager, fields string) string {
		return `{"manager":"` + manager + `","operation":"Update","apiVersion":"v1","time":"2026-12-01T12:03:40Z","fieldsType":"FieldsV1","fieldsV1":` + fields + `}`
	}
	code, body := do(t, h, "POST", path, "", []byte(`{"metadata":{"name":"c1"},"data":{"a":"1"}}`), "User-Agent", "kwatch-fixture")
	require.Equal(t, 201, code, "%s", body)
	require.Equal(t, "["+entry("kwatch-fixture", `{"f:data":{".":{},"f:a":{}}}`)+"]", managedOf(t, body))

	code, body = do(t, h, "PUT", path+"/c1", "", []byte(`{"metadata":{"name":"c1"},"data":{"a":"1","z":"2"}}`),
		"User-Agent", "foo/1.2.3 (linux/amd64) kubernetes/abc")
	require.Equal(t, 200, code, "%s", body)
	require.Equal(t, "["+entry("foo", `{"f:data":{"f:z":{}}}`)+","+entry("kwatch-fixture", `{"f:data":{".":{},"f:a":{}}}`)+"]", managedOf(t, body),
		"a PUT without managedFields keeps the stored ones; same time: sorted by manager")

	code, body = do(t, h, "PATCH", path+"/c1", "", []byte(`{"data":{"x":"2"}}`), "Content-Type", "application/merge-patch+json", "User-Agent", "")
	require.Equal(t, 200, code, "%s", body)
	require.Contains(t, managedOf(t, body), entry("unknown", `{"f:data":{"f:x":{}}}`))

	code, body = do(t, h, "PATCH", path+"/c1?fieldManager=editor", "", []byte(`{"data":{"a":"9"}}`), "Content-Type", "application/merge-patch+json")
	require.Equal(t, 200, code, "%s", body)
	require.Contains(t, managedOf(t, body), entry("kwatch-fixture", `{"f:data":{}}`), "a changed field changes owner")
	require.Contains(t, managedOf(t, body), entry("editor", `{"f:data":{"f:a":{}}}`))

	// One empty entry clears them; the write's own entry remains.
	code, body = do(t, h, "PATCH", path+"/c1?fieldManager=editor", "", []byte(`{"metadata":{"managedFields":[{}]},"data":{"b":"1"}}`),
		"Content-Type", "application/merge-patch+json")
	require.Equal(t, 200, code, "%s", body)
	require.Equal(t, "["+entry("editor", `{"f:data":{"f:b":{}}}`)+"]", managedOf(t, body))
}

// TestCreateManagedFieldsOfKinds: the fields a create owns, for kinds whose empty
// object has structs (not owned as added) and keyed lists.
func TestCreateManagedFieldsOfKinds(t *testing.T) {
	h := simkit.Start(t, sim.Options{Clock: fixedClock})
	code, body := do(t, h, "POST", "/apis/apps/v1/namespaces/p/deployments?fieldManager=kubectl-create", "",
		[]byte(`{"metadata":{"name":"d1","labels":{"app":"d1"}},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"d1"}},"template":{"metadata":{"labels":{"app":"d1"}},"spec":{"containers":[{"name":"a","image":"img-a","env":[{"name":"X","value":"1"}]}]}}}}`))
	require.Equal(t, 201, code, "%s", body)
	require.Equal(t, `[{"manager":"kubectl-create","operation":"Update","apiVersion":"apps/v1","time":"2026-12-01T12:03:40Z","fieldsType":"FieldsV1","fieldsV1":`+
		`{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},`+
		`"f:spec":{"f:containers":{"k:{\"name\":\"a\"}":{".":{},"f:env":{".":{},"k:{\"name\":\"X\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:name":{}}}}}}}}]`,
		managedOf(t, body))

	code, body = do(t, h, "POST", "/api/v1/namespaces", "", []byte(`{"metadata":{"name":"ns1"}}`), "User-Agent", "kwatch-fixture")
	require.Equal(t, 201, code, "%s", body)
	require.Equal(t, `[{"manager":"kwatch-fixture","operation":"Update","apiVersion":"v1","time":"2026-12-01T12:03:40Z","fieldsType":"FieldsV1","fieldsV1":`+
		`{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}}}}]`, managedOf(t, body),
		"the default label is the creator's; the finalizer and the status are nobody's")

	code, body = do(t, h, "POST", "/api/v1/namespaces/p/services", "", []byte(`{"metadata":{"name":"s"},"spec":{"ports":[{"port":80,"protocol":"TCP"}]}}`),
		"User-Agent", "kwatch-fixture")
	require.Equal(t, 201, code, "%s", body)
	require.Contains(t, managedOf(t, body), `"f:ports":{".":{},"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{},"f:protocol":{}}}`)
}

// TestStatusSubresourceManagedFields: a write through /status owns status under
// an entry of subresource status.
func TestStatusSubresourceManagedFields(t *testing.T) {
	h := simkit.Start(t, sim.Options{Clock: fixedClock})
	code, body := do(t, h, "POST", "/apis/apps/v1/namespaces/p/deployments", "",
		[]byte(`{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`),
		"User-Agent", "kwatch-fixture")
	require.Equal(t, 201, code, "%s", body)
	code, body = do(t, h, "PATCH", "/apis/apps/v1/namespaces/p/deployments/d/status", "",
		[]byte(`{"status":{"replicas":5,"conditions":[{"type":"Available","status":"True"}]}}`),
		"Content-Type", "application/merge-patch+json", "User-Agent", "kwatch-fixture")
	require.Equal(t, 200, code, "%s", body)
	require.Contains(t, managedOf(t, body), `{"manager":"kwatch-fixture","operation":"Update","apiVersion":"apps/v1","time":"2026-12-01T12:03:40Z","fieldsType":"FieldsV1","fieldsV1":`+
		`{"f:status":{"f:conditions":{".":{},"k:{\"type\":\"Available\"}":{".":{},"f:status":{},"f:type":{}}},"f:replicas":{}}},"subresource":"status"}`)
}

// TestCustomResourceManagedFields: outside its metadata a custom resource is
// owned as the real server owns one whose schema preserves unknown fields:
// every map key on its own, lists whole; apply works on it too.
func TestCustomResourceManagedFields(t *testing.T) {
	h := simkit.Start(t, sim.Options{Clock: fixedClock, Resources: []sim.ResourceInfo{{Group: "example.com", Version: "v1",
		Resource: "widgets", Kind: "Widget", Namespaced: true, StatusSubresource: true}}})
	const path = "/apis/example.com/v1/namespaces/p/widgets"
	code, body := do(t, h, "POST", path, "", []byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":1,"items":[{"name":"a"}]}}`),
		"User-Agent", "kwatch-fixture")
	require.Equal(t, 201, code, "%s", body)
	require.Equal(t, `[{"manager":"kwatch-fixture","operation":"Update","apiVersion":"example.com/v1","time":"2026-12-01T12:03:40Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:items":{},"f:size":{}}}}]`,
		managedOf(t, body), "as the real server answered the same create")

	code, body = do(t, h, "PATCH", path+"/w1?fieldManager=sizer", "", []byte(`{"apiVersion":"example.com/v1","kind":"Widget","spec":{"size":2}}`),
		"Content-Type", applyCT)
	require.Equal(t, 409, code, "%s", body)
	require.Equal(t, `Apply failed with 1 conflict: conflict with "kwatch-fixture" using example.com/v1: .spec.size`, decodeMap(t, body)["message"])

	code, body = do(t, h, "PATCH", path+"/w1/status?fieldManager=reporter", "", []byte(`{"apiVersion":"example.com/v1","kind":"Widget","status":{"ready":true},"spec":{"size":9}}`),
		"Content-Type", applyCT)
	require.Equal(t, 200, code, "apply through /status: %s", body)
	o := decodeMap(t, body)
	require.Equal(t, map[string]any{"ready": true}, o["status"])
	require.EqualValues(t, 1, o["spec"].(map[string]any)["size"], "an apply through /status changes only the status")
	require.Contains(t, managedOf(t, body), `{"manager":"reporter","operation":"Apply","apiVersion":"example.com/v1","time":"2026-12-01T12:03:40Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{".":{},"f:ready":{}}},"subresource":"status"}`)
}
