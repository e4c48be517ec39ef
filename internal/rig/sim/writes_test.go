package sim_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

func TestCreateGetUpdateDelete(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	code, body := do(t, h, "POST", "/api/v1/namespaces/demo/configmaps", "",
		[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"cfg-"},"data":{"a":"1"}}`),
		"Content-Type", "application/json")
	require.Equal(t, 201, code, "%s", body)
	cm := decodeMap(t, body)
	md := cm["metadata"].(map[string]any)
	name := md["name"].(string)
	require.Regexp(t, `^cfg-[a-z0-9]{5}$`, name)
	require.NotEmpty(t, md["uid"])
	require.NotEmpty(t, md["creationTimestamp"])
	rv := md["resourceVersion"].(string)

	_, err := h.Server.Get("namespaces", "", "demo")
	require.NoError(t, err, "the namespace was created implicitly")

	code, body = do(t, h, "POST", "/api/v1/namespaces/demo/configmaps", "",
		[]byte(`{"metadata":{"name":"`+name+`"}}`))
	require.Equal(t, 409, code)
	require.Equal(t, "AlreadyExists", decodeMap(t, body)["reason"])

	update := `{"metadata":{"name":"` + name + `","resourceVersion":"` + rv + `"},"data":{"a":"2"}}`
	code, body = do(t, h, "PUT", "/api/v1/namespaces/demo/configmaps/"+name, "", []byte(update))
	require.Equal(t, 200, code, "%s", body)
	newRV := decodeMap(t, body)["metadata"].(map[string]any)["resourceVersion"].(string)
	require.NotEqual(t, rv, newRV)

	code, body = do(t, h, "PUT", "/api/v1/namespaces/demo/configmaps/"+name, "", []byte(update))
	require.Equal(t, 409, code, "stale resourceVersion")
	st := decodeMap(t, body)
	require.Equal(t, "Conflict", st["reason"])
	require.Contains(t, st["message"], "the object has been modified")

	// A no-op update keeps the resourceVersion.
	same := `{"metadata":{"name":"` + name + `"},"data":{"a":"2"}}`
	code, body = do(t, h, "PUT", "/api/v1/namespaces/demo/configmaps/"+name, "", []byte(same))
	require.Equal(t, 200, code)
	require.Equal(t, newRV, decodeMap(t, body)["metadata"].(map[string]any)["resourceVersion"])

	// A configmap's delete answers a Status naming it, as the real server's does.
	code, body = do(t, h, "DELETE", "/api/v1/namespaces/demo/configmaps/"+name, "", nil)
	require.Equal(t, 200, code)
	st = decodeMap(t, body)
	require.Equal(t, "Success", st["status"], "%s", body)
	require.Equal(t, map[string]any{"name": name, "kind": "configmaps", "uid": md["uid"]}, st["details"])
	code, _ = do(t, h, "DELETE", "/api/v1/namespaces/demo/configmaps/"+name, "", nil)
	require.Equal(t, 404, code)

	// A pod's delete answers the pod at its deletion RV.
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "gone"})
	code, body = do(t, h, "DELETE", "/api/v1/namespaces/demo/pods/gone", "", nil)
	require.Equal(t, 200, code)
	delRV, err := strconv.ParseUint(decodeMap(t, body)["metadata"].(map[string]any)["resourceVersion"].(string), 10, 64)
	require.NoError(t, err)
	require.Equal(t, h.Server.ResourceVersion(), delRV, "the deleted object carries the deletion RV")

	// deletecollection with a selector.
	seedPods(t, h, "demo", 3)
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "keep", Labels: map[string]string{"app": "keep"}})
	code, body = do(t, h, "DELETE", "/api/v1/namespaces/demo/pods?labelSelector=app%3Dworker", "", nil)
	require.Equal(t, 200, code, "%s", body)
	require.Len(t, items(t, decodeMap(t, body)), 3)
	_, snap, err := h.Server.Snapshot("pods")
	require.NoError(t, err)
	require.Len(t, snap, 1)
	require.Contains(t, snap, "demo/keep")
}

func TestPatchTypes(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "p", Labels: map[string]string{"app": "web", "old": "x"}})
	tests := []struct {
		name, ctype, patch string
		wantLabels         map[string]any
	}{
		{"merge", "application/merge-patch+json", `{"metadata":{"labels":{"old":null,"new":"y"}}}`,
			map[string]any{"app": "web", "new": "y"}},
		{"strategic", "application/strategic-merge-patch+json", `{"metadata":{"labels":{"s":"1"},"$setElementOrder/x":[]}}`,
			map[string]any{"app": "web", "new": "y", "s": "1"}},
		{"json", "application/json-patch+json", `[{"op":"remove","path":"/metadata/labels/s"},{"op":"add","path":"/metadata/labels/j","value":"2"}]`,
			map[string]any{"app": "web", "new": "y", "j": "2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(t, h, "PATCH", "/api/v1/namespaces/demo/pods/p", "", []byte(tc.patch), "Content-Type", tc.ctype)
			require.Equal(t, 200, code, "%s", body)
			got := decodeMap(t, body)["metadata"].(map[string]any)["labels"]
			require.Equal(t, tc.wantLabels, got)
		})
	}
	code, _ := do(t, h, "PATCH", "/api/v1/namespaces/demo/pods/p", "", []byte(`{}`), "Content-Type", "text/plain")
	require.Equal(t, 415, code)
	code, _ = do(t, h, "PATCH", "/api/v1/namespaces/demo/pods/p", "", []byte(`{}`), "Content-Type", "application/apply-patch+yaml")
	require.Equal(t, 422, code, "apply needs a fieldManager")
	code, body := do(t, h, "PATCH", "/api/v1/namespaces/demo/pods/p", "", []byte(`{"metadata":{"resourceVersion":"1"}}`),
		"Content-Type", "application/merge-patch+json")
	require.Equal(t, 409, code, "a resourceVersion in a patch is a precondition: %s", body)
	obj, err := h.Server.Patch("pods", "demo", "p", []byte(`{"status":{"phase":"Failed"}}`))
	require.NoError(t, err)
	require.Contains(t, string(obj.JSON), `"phase":"Failed"`)
}

func TestInProcessAPI(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	obj, err := h.Server.Create("deployments", []byte(`{"metadata":{"name":"d","namespace":"demo"},"spec":{"replicas":1}}`))
	require.NoError(t, err)
	require.Equal(t, h.Server.ResourceVersion(), obj.ResourceVersion)
	_, err = h.Server.Update("deployments.apps", []byte(`{"metadata":{"name":"d","namespace":"demo","resourceVersion":"1"},"spec":{"replicas":2}}`))
	var se *sim.StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 409, se.Code())
	upd, err := h.Server.Update("deployments.apps", []byte(`{"metadata":{"name":"d","namespace":"demo"},"spec":{"replicas":2}}`))
	require.NoError(t, err)
	require.Contains(t, string(upd.JSON), `"generation":2`, "a spec change bumps generation")
	rv, snap, err := h.Server.Snapshot("deployments.apps")
	require.NoError(t, err)
	require.Equal(t, h.Server.ResourceVersion(), rv)
	require.Len(t, snap, 1)
	require.Equal(t, upd.ResourceVersion, snap["demo/d"].ResourceVersion)
	_, err = h.Server.Create("nope", []byte(`{}`))
	require.ErrorContains(t, err, `unknown resource "nope"`)
	_, err = h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"demo"}}`))
	require.ErrorAs(t, err, &se)
	require.Equal(t, 422, se.Code(), "no name and no generateName")
	_, err = h.Server.Create("configmaps", []byte(`[1,2]`))
	require.ErrorAs(t, err, &se)
	require.Equal(t, 400, se.Code())
	require.NoError(t, h.Server.RegisterResource(sim.ResourceInfo{Group: "example.com", Version: "v1",
		Resource: "widgets", Kind: "Widget", Namespaced: true, ShortNames: []string{"wd"}}))
	require.Error(t, h.Server.RegisterResource(sim.ResourceInfo{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget"}))
	_, err = h.Server.Create("widgets.example.com", []byte(`{"metadata":{"name":"w","namespace":"demo"}}`))
	require.NoError(t, err)
	list := getMap(t, h, "/apis/example.com/v1/namespaces/demo/widgets")
	require.Equal(t, "WidgetList", list["kind"])
	require.Equal(t, "example.com/v1", list["apiVersion"])
	require.Len(t, items(t, list), 1)
}

func TestMethodAndPathErrors(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	tests := []struct {
		method, path string
		code         int
	}{
		{"POST", "/api/v1/pods", 405},
		{"DELETE", "/api/v1/pods", 405},
		{"OPTIONS", "/api/v1/pods", 405},
		{"GET", "/api/v2/pods", 404},
		{"GET", "/apis/apps/v1/pods", 404},
		{"GET", "/nothing", 404},
	}
	for _, tc := range tests {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			code, body := do(t, h, tc.method, tc.path, "", nil)
			require.Equal(t, tc.code, code, "%s", body)
			require.Equal(t, "Status", decodeMap(t, body)["kind"])
		})
	}
}
