package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// TestDeleteOptions: options are checked as the real server checks them, and
// preconditions fail with its wording (status-409-delete-precondition.json).
func TestDeleteOptions(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	obj, err := h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"p","name":"x3"}}`))
	require.NoError(t, err)
	const path = "/api/v1/namespaces/p/configmaps/x3"
	const unsupported = `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"`
	tests := []struct {
		name, query, body string
		code              int
		msg               string
	}{
		{"bad policy in the body", "", `{"propagationPolicy":"Bogus"}`, 422, unsupported},
		{"bad policy in the query", "?propagationPolicy=Bogus", "", 422, unsupported},
		{"orphan and a policy", "", `{"orphanDependents":true,"propagationPolicy":"Foreground"}`, 422,
			`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Foreground": orphanDependents and deletionPropagation cannot be both set`},
		{"bad dryRun", "?dryRun=Bogus", "", 422,
			`DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Bogus"]: supported values: "All"`},
		{"another kind", "", `{"kind":"Pod"}`, 400, `no kind "Pod" is registered for version "meta.k8s.io/v1" in scheme "pkg/runtime/scheme.go:111"`},
		{"bad JSON", "", `{bad`, 400, "couldn't get version/kind; json parse error: invalid character 'b' looking for beginning of object key string"},
		{"wrong resourceVersion", "", `{"preconditions":{"resourceVersion":"1"}}`, 409,
			`Operation cannot be fulfilled on ConfigMap "x3": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (` +
				strconvU(obj.ResourceVersion) + `). The object might have been modified`},
		{"wrong uid first", "", `{"preconditions":{"uid":"00000000-0000-0000-0000-000000000000","resourceVersion":"1"}}`, 409,
			`Operation cannot be fulfilled on ConfigMap "x3": the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record (` +
				obj.UID + `). The object might have been deleted and then recreated`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			if tc.body != "" {
				body = []byte(tc.body)
			}
			code, got := do(t, h, "DELETE", path+tc.query, "", body, "Content-Type", "application/json")
			require.Equal(t, tc.code, code, "%s", got)
			require.Equal(t, tc.msg, decodeMap(t, got)["message"])
		})
	}
	code, got := do(t, h, "DELETE", path+"?dryRun=All&propagationPolicy=Background&gracePeriodSeconds=0", "", nil)
	require.Equal(t, 200, code, "%s", got)
	require.JSONEq(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"x3","kind":"configmaps","uid":"`+obj.UID+`"}}`, string(got))
	_, err = h.Server.Get("configmaps", "p", "x3")
	require.NoError(t, err, "a dry run deletes nothing")
	code, got = do(t, h, "DELETE", path, "", []byte(`{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground","preconditions":{"uid":"`+obj.UID+`"}}`))
	require.Equal(t, 200, code, "%s", got)
	require.Equal(t, []any{"foregroundDeletion"}, decodeMap(t, got)["metadata"].(map[string]any)["finalizers"],
		"Foreground leaves the object to the garbage collector (finalize.go)")
	_, err = h.Server.Delete("configmaps", "p", "x3")
	require.NoError(t, err, "the in-process delete removes it at once")

	_, err = h.Server.Create("deployments.apps", []byte(`{"metadata":{"namespace":"p","name":"dd"}}`))
	require.NoError(t, err)
	code, got = do(t, h, "DELETE", "/apis/apps/v1/namespaces/p/deployments/dd", "", nil)
	require.Equal(t, 200, code)
	require.Equal(t, map[string]any{"name": "dd", "group": "apps", "kind": "deployments", "uid": decodeMap(t, got)["details"].(map[string]any)["uid"]},
		decodeMap(t, got)["details"])
	_, err = h.Server.Create("services", []byte(`{"metadata":{"namespace":"p","name":"sv"}}`))
	require.NoError(t, err)
	code, got = do(t, h, "DELETE", "/api/v1/namespaces/p/services/sv", "", nil)
	require.Equal(t, 200, code)
	require.Equal(t, "Service", decodeMap(t, got)["kind"], "a service's delete answers the service")
}

// TestValidation: the real server's 422 for a bad name and data keys
// (status-422-invalid.json) and the name rules of each kind.
func TestValidation(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	code, body := do(t, h, "POST", "/api/v1/namespaces/p/configmaps", "", []byte(`{"metadata":{"name":"Bad_Name"},"data":{"a b":"1"}}`))
	require.Equal(t, 422, code)
	require.JSONEq(t, string(capture(t, "status-422-invalid.json")), string(body))

	label := `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`
	tests := []struct{ path, body, msg string }{
		{"/api/v1/namespaces", `{"metadata":{"name":"Bad.ns"}}`, `Namespace "Bad.ns" is invalid: metadata.name: Invalid value: "Bad.ns": ` + label},
		{"/api/v1/namespaces", `{"metadata":{"name":"a.b"}}`, `Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots`},
		{"/api/v1/namespaces/p/services", `{"metadata":{"name":"a_b"}}`, `Service "a_b" is invalid: metadata.name: Invalid value: "a_b": ` + label},
		{"/api/v1/namespaces/p/configmaps", `{"metadata":{"name":"dup"},"data":{"k":"1"},"binaryData":{"k":"eA=="}}`,
			`ConfigMap "dup" is invalid: data[k]: Invalid value: "k": duplicate of key present in binaryData`},
		{"/api/v1/namespaces/p/configmaps", `{"metadata":{"name":"dots"},"data":{"..":"1"}}`,
			`ConfigMap "dots" is invalid: data[..]: Invalid value: "..": must not be '..'`},
		{"/api/v1/namespaces/p/secrets", `{"metadata":{"name":"ok"},"data":{"a b":"eA=="}}`,
			`Secret "ok" is invalid: data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`},
		{"/apis/apps/v1/namespaces/p/deployments", `{"metadata":{"name":"x."}}`,
			`Deployment.apps "x." is invalid: metadata.name: Invalid value: "x.": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
	}
	for _, tc := range tests {
		code, body := do(t, h, "POST", tc.path, "", []byte(tc.body))
		require.Equal(t, 422, code, "%s %s: %s", tc.path, tc.body, body)
		require.Equal(t, tc.msg, decodeMap(t, body)["message"])
	}
	code, body = do(t, h, "POST", "/api/v1/namespaces/p/services", "", []byte(`{"metadata":{"name":"1svc"}}`))
	require.Equal(t, 201, code, "a label may start with a digit: %s", body)

	code, body = do(t, h, "PATCH", "/api/v1/namespaces/p/configmaps/ok", "", []byte(`{"data":{"a b":"1"}}`), "Content-Type", "application/merge-patch+json")
	require.Equal(t, 404, code, "a missing object is 404 before its validation: %s", body)
	_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"p","name":"ok"}}`))
	require.NoError(t, err)
	code, _ = do(t, h, "PATCH", "/api/v1/namespaces/p/configmaps/ok", "", []byte(`{"data":{"a b":"1"}}`), "Content-Type", "application/merge-patch+json")
	require.Equal(t, 422, code, "data keys are checked on every write")
}

// TestDryRun: dryRun=All answers what the write would produce and changes
// nothing; a create's answer has no resourceVersion, as on the real server.
func TestDryRun(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"p","name":"c1"},"data":{"a":"1"}}`))
	require.NoError(t, err)
	rv := h.Server.ResourceVersion()
	const cms = "/api/v1/namespaces/p/configmaps"
	code, body := do(t, h, "POST", cms+"?dryRun=All", "", []byte(`{"metadata":{"name":"dry"},"data":{"a":"1"}}`))
	require.Equal(t, 201, code, "%s", body)
	md := decodeMap(t, body)["metadata"].(map[string]any)
	require.NotContains(t, md, "resourceVersion")
	require.NotEmpty(t, md["uid"])
	require.NotEmpty(t, md["managedFields"])

	code, body = do(t, h, "PATCH", cms+"/dry2?fieldManager=m&dryRun=All", "", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dry2"},"data":{"a":"1"}}`),
		"Content-Type", applyCT)
	require.Equal(t, 201, code, "%s", body)
	require.NotContains(t, decodeMap(t, body)["metadata"], "resourceVersion")

	code, body = do(t, h, "PATCH", cms+"/c1?dryRun=All", "", []byte(`{"data":{"dry":"1"}}`), "Content-Type", "application/merge-patch+json")
	require.Equal(t, 200, code, "%s", body)
	require.Equal(t, map[string]any{"a": "1", "dry": "1"}, decodeMap(t, body)["data"])
	require.Equal(t, strconvU(rv), decodeMap(t, body)["metadata"].(map[string]any)["resourceVersion"])

	code, body = do(t, h, "PUT", cms+"/c1?dryRun=All", "", []byte(`{"metadata":{"name":"c1"},"data":{"b":"2"}}`))
	require.Equal(t, 200, code, "%s", body)
	code, body = do(t, h, "PATCH", cms+"/c1?fieldManager=m&dryRun=All", "", []byte(`{"apiVersion":"v1","kind":"ConfigMap","data":{"c":"3"}}`),
		"Content-Type", applyCT)
	require.Equal(t, 200, code, "%s", body)
	code, body = do(t, h, "DELETE", cms+"/c1?dryRun=All", "", nil)
	require.Equal(t, 200, code, "%s", body)

	require.Equal(t, rv, h.Server.ResourceVersion(), "nothing was written")
	got, err := h.Server.Get("configmaps", "p", "c1")
	require.NoError(t, err)
	require.Contains(t, string(got.JSON), `"data":{"a":"1"}`)
	_, err = h.Server.Get("configmaps", "p", "dry")
	require.Error(t, err)
}
