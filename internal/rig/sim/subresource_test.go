package sim_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// createPod creates pod demo/name over HTTP and returns it decoded.
func createPod(t *testing.T, h *simkit.Harness, name string) map[string]any {
	t.Helper()
	code, body := do(t, h, "POST", "/api/v1/namespaces/demo/pods", "",
		podJSON(name, `{"containers":[`+container("c", `{}`)+`]}`, ""))
	require.Equal(t, 201, code, "%s", body)
	return decodeMap(t, body)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func metaOf(o map[string]any) map[string]any { return o["metadata"].(map[string]any) }

func TestPutKeepsStatusAndStatusSubresourceChangesOnlyStatus(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	pod := createPod(t, h, "p")
	rv := metaOf(pod)["resourceVersion"]

	// PUT of the object with only the status changed: a no-op, the RV stays.
	pod["status"] = map[string]any{"phase": "Running"}
	code, body := do(t, h, "PUT", "/api/v1/namespaces/demo/pods/p", "", mustJSON(t, pod))
	require.Equal(t, 200, code, "%s", body)
	got := decodeMap(t, body)
	require.Equal(t, map[string]any{"phase": "Pending", "qosClass": "BestEffort"}, got["status"])
	require.Equal(t, rv, metaOf(got)["resourceVersion"], "a status-only PUT of the object changes nothing")

	// PUT of the object changing a label and the status: the label changes only.
	metaOf(pod)["labels"] = map[string]any{"step": "1"}
	code, body = do(t, h, "PUT", "/api/v1/namespaces/demo/pods/p", "", mustJSON(t, pod))
	require.Equal(t, 200, code, "%s", body)
	got = decodeMap(t, body)
	require.Equal(t, "Pending", got["status"].(map[string]any)["phase"])
	require.Equal(t, map[string]any{"step": "1"}, metaOf(got)["labels"])

	// PUT of /status: the status changes (qosClass kept when left out), the spec
	// and labels the body carries do not, and neither does generation.
	pod = got
	pod["status"] = map[string]any{"phase": "Running", "podIP": "10.1.2.3"}
	pod["spec"].(map[string]any)["nodeName"] = "node-1"
	metaOf(pod)["labels"] = map[string]any{"step": "2"}
	code, body = do(t, h, "PUT", "/api/v1/namespaces/demo/pods/p/status", "", mustJSON(t, pod))
	require.Equal(t, 200, code, "%s", body)
	got = decodeMap(t, body)
	require.Equal(t, map[string]any{"phase": "Running", "podIP": "10.1.2.3", "qosClass": "BestEffort"}, got["status"])
	require.NotContains(t, got["spec"], "nodeName")
	require.Equal(t, map[string]any{"step": "1"}, metaOf(got)["labels"])
	require.EqualValues(t, 1, metaOf(got)["generation"])

	// A stale resourceVersion on /status is a conflict.
	code, _ = do(t, h, "PUT", "/api/v1/namespaces/demo/pods/p/status", "", mustJSON(t, pod))
	require.Equal(t, 409, code)

	// PATCH of the object ignores status; PATCH of /status applies it.
	code, body = do(t, h, "PATCH", "/api/v1/namespaces/demo/pods/p", "",
		[]byte(`{"status":{"phase":"Failed"},"metadata":{"labels":{"step":"3"}}}`), "Content-Type", "application/merge-patch+json")
	require.Equal(t, 200, code, "%s", body)
	got = decodeMap(t, body)
	require.Equal(t, "Running", got["status"].(map[string]any)["phase"])
	require.Equal(t, "3", metaOf(got)["labels"].(map[string]any)["step"])
	code, body = do(t, h, "PATCH", "/api/v1/namespaces/demo/pods/p/status", "",
		[]byte(`{"status":{"phase":"Succeeded"},"spec":{"nodeName":"node-2"}}`), "Content-Type", "application/merge-patch+json")
	require.Equal(t, 200, code, "%s", body)
	got = decodeMap(t, body)
	require.Equal(t, "Succeeded", got["status"].(map[string]any)["phase"])
	require.NotContains(t, got["spec"], "nodeName")

	// The status-selected watchers and lists see the new phase.
	list := getMap(t, h, "/api/v1/namespaces/demo/pods?fieldSelector=status.phase%3DSucceeded")
	require.Len(t, items(t, list), 1)
	require.Equal(t, got, getMap(t, h, "/api/v1/namespaces/demo/pods/p/status"), "GET of /status is the object")
}

func TestInProcessWritesSetAnyStatus(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	pod := createPod(t, h, "p")
	pod["status"] = map[string]any{"phase": "Running"}
	obj, err := h.Server.Update("pods", mustJSON(t, pod))
	require.NoError(t, err)
	require.Equal(t, map[string]any{"phase": "Running"}, decodeMap(t, obj.JSON)["status"])
	obj, err = h.Server.Patch("pods", "demo", "p", []byte(`{"status":{"phase":"Failed"}}`))
	require.NoError(t, err)
	require.Equal(t, "Failed", decodeMap(t, obj.JSON)["status"].(map[string]any)["phase"])
}

func TestStatusSubresourceOnlyWhereItExists(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"name":"c","namespace":"demo"}}`))
	require.NoError(t, err)
	createPod(t, h, "p")
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/api/v1/namespaces/demo/configmaps/c/status", 404},
		{"PUT", "/api/v1/namespaces/demo/configmaps/c/status", 404},
		{"GET", "/api/v1/namespaces/demo/pods/p/scale", 404},
		{"GET", "/api/v1/namespaces/demo/pods/p/status?watch=1", 405},
		{"DELETE", "/api/v1/namespaces/demo/pods/p/status", 405},
		{"GET", "/api/v1/namespaces/demo/pods/p/status", 200},
	} {
		code, body := do(t, h, tc.method, tc.path, "", []byte(`{}`))
		require.Equal(t, tc.code, code, "%s %s: %s", tc.method, tc.path, body)
	}
	var withStatus []string
	for _, r := range getMap(t, h, "/api/v1")["resources"].([]any) {
		if name := r.(map[string]any)["name"].(string); len(name) > 7 && name[len(name)-7:] == "/status" {
			withStatus = append(withStatus, name)
		}
	}
	require.ElementsMatch(t, []string{"pods/status", "namespaces/status", "services/status", "nodes/status"}, withStatus)
}
