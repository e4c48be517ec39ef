package sim_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// A webhook written by hand (not with package webhook: the simulator is
// checked on its own): it records each AdmissionReview and answers with
// answer(request).
type testHook struct {
	srv    *httptest.Server
	mu     sync.Mutex
	seen   []map[string]any // requests, guarded by mu
	answer func(req map[string]any) map[string]any
}

func startHook(t *testing.T, answer func(req map[string]any) map[string]any) *testHook {
	h := &testHook{answer: answer}
	h.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rv struct {
			Request map[string]any `json:"request"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &rv); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		h.mu.Lock()
		h.seen = append(h.seen, rv.Request)
		h.mu.Unlock()
		resp := h.answer(rv.Request)
		resp["uid"] = rv.Request["uid"]
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp})
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *testHook) requests() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.seen...)
}

func (h *testHook) caBundle() string {
	return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: h.srv.Certificate().Raw}))
}

// hookConfig is a webhook configuration of one webhook on configmaps.
func hookConfig(kind, name, url, ca string, extra map[string]any) []byte {
	hook := map[string]any{"name": name + ".example.com", "admissionReviewVersions": []string{"v1"}, "sideEffects": "None",
		"clientConfig": map[string]any{"url": url, "caBundle": ca},
		"rules": []any{map[string]any{"operations": []string{"CREATE", "UPDATE", "DELETE"}, "apiGroups": []string{""},
			"apiVersions": []string{"v1"}, "resources": []string{"configmaps"}}}}
	for k, v := range extra {
		hook[k] = v
	}
	b, _ := json.Marshal(map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name}, "webhooks": []any{hook}})
	return b
}

func createConfig(t *testing.T, h *simkit.Harness, kind string, body []byte) {
	t.Helper()
	res := map[string]string{"ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
		"MutatingWebhookConfiguration": "mutatingwebhookconfigurations"}[kind]
	code, out := do(t, h, http.MethodPost, "/apis/admissionregistration.k8s.io/v1/"+res, "", body)
	require.Equal(t, http.StatusCreated, code, "%s", out)
}

// send makes a request and returns its code, body and Warning headers.
func send(t *testing.T, h *simkit.Harness, method, path string, body []byte) (int, []byte, []string) {
	t.Helper()
	req := h.NewRequest(t, method, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.Client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header.Values("Warning")
}

func cmBody(name string, labels map[string]string) []byte {
	b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "labels": labels}, "data": map[string]string{"a": "1"}})
	return b
}

// seedBody is a configmap for the in-process Create, which needs its namespace.
func seedBody(name string) []byte {
	return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default","name":"` + name + `"},"data":{"a":"1"}}`)
}

func TestValidatingWebhookDenies(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	hook := startHook(t, func(req map[string]any) map[string]any {
		obj, _ := req["object"].(map[string]any)
		md, _ := obj["metadata"].(map[string]any)
		if name, _ := md["name"].(string); name == "bad" {
			return map[string]any{"allowed": false, "status": map[string]any{"code": 403, "reason": "Forbidden", "message": "bad is a bad name"}}
		}
		return map[string]any{"allowed": true, "warnings": []string{"looked at " + req["operation"].(string)}}
	})
	createConfig(t, h, "ValidatingWebhookConfiguration", hookConfig("ValidatingWebhookConfiguration", "deny", hook.srv.URL+"/validate", hook.caBundle(), nil))

	code, out, _ := send(t, h, http.MethodPost, "/api/v1/namespaces/default/configmaps", cmBody("bad", nil))
	require.Equal(t, 403, code, "%s", out)
	st := decodeMap(t, out)
	require.Equal(t, `admission webhook "deny.example.com" denied the request: bad is a bad name`, st["message"])
	require.Equal(t, "Forbidden", st["reason"])
	code, _, _ = send(t, h, http.MethodGet, "/api/v1/namespaces/default/configmaps/bad", nil)
	require.Equal(t, 404, code, "a denied create stores nothing")

	code, out, warn := send(t, h, http.MethodPost, "/api/v1/namespaces/default/configmaps", cmBody("good", nil))
	require.Equal(t, 201, code, "%s", out)
	require.Equal(t, []string{`299 - "looked at CREATE"`}, warn)
	code, _, warn = send(t, h, http.MethodPut, "/api/v1/namespaces/default/configmaps/good", cmBody("good", map[string]string{"x": "y"}))
	require.Equal(t, 200, code)
	require.Equal(t, []string{`299 - "looked at UPDATE"`}, warn)
	code, _, warn = send(t, h, http.MethodDelete, "/api/v1/namespaces/default/configmaps/good", nil)
	require.Equal(t, 200, code)
	require.Equal(t, []string{`299 - "looked at DELETE"`}, warn)

	reqs := hook.requests()
	require.Len(t, reqs, 4)
	upd := reqs[2]
	require.Equal(t, "UPDATE", upd["operation"])
	require.Equal(t, "good", upd["name"])
	require.Equal(t, "default", upd["namespace"])
	require.Equal(t, map[string]any{"group": "", "version": "v1", "resource": "configmaps"}, upd["resource"])
	require.Equal(t, "system:admin", upd["userInfo"].(map[string]any)["username"])
	require.NotNil(t, upd["oldObject"], "an update carries the stored object")
	require.Equal(t, false, upd["dryRun"])
	del := reqs[3]
	require.Nil(t, del["object"])
	require.NotNil(t, del["oldObject"])
	require.Equal(t, "DeleteOptions", del["options"].(map[string]any)["kind"])

	// In-process writes stand for controllers seeding state: no webhook.
	_, err := h.Server.Create("configmaps", seedBody("bad"))
	require.NoError(t, err)
	require.Len(t, hook.requests(), 4)
}

func TestMutatingWebhookPatches(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	patch := base64.StdEncoding.EncodeToString([]byte(`[{"op":"add","path":"/metadata/labels","value":{"defaulted":"yes"}},{"op":"add","path":"/data/b","value":"2"}]`))
	hook := startHook(t, func(map[string]any) map[string]any {
		return map[string]any{"allowed": true, "patchType": "JSONPatch", "patch": patch}
	})
	// A validating webhook after it sees the mutated object.
	var sawLabel bool
	check := startHook(t, func(req map[string]any) map[string]any {
		l, _ := req["object"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)
		sawLabel = l["defaulted"] == "yes"
		return map[string]any{"allowed": true}
	})
	createConfig(t, h, "MutatingWebhookConfiguration", hookConfig("MutatingWebhookConfiguration", "mutate", hook.srv.URL, hook.caBundle(), nil))
	createConfig(t, h, "ValidatingWebhookConfiguration", hookConfig("ValidatingWebhookConfiguration", "check", check.srv.URL, check.caBundle(), nil))
	code, out, _ := send(t, h, http.MethodPost, "/api/v1/namespaces/default/configmaps", cmBody("m", nil))
	require.Equal(t, 201, code, "%s", out)
	obj := getMap(t, h, "/api/v1/namespaces/default/configmaps/m")
	require.Equal(t, map[string]any{"defaulted": "yes"}, obj["metadata"].(map[string]any)["labels"])
	require.Equal(t, map[string]any{"a": "1", "b": "2"}, obj["data"])
	require.True(t, sawLabel, "validation runs after mutation")
}

func TestWebhookFailurePolicy(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	hook := startHook(t, func(map[string]any) map[string]any { return map[string]any{"allowed": true} })
	url := hook.srv.URL + "/down"
	ca := hook.caBundle()
	hook.srv.Close() // the webhook is down
	createConfig(t, h, "ValidatingWebhookConfiguration", hookConfig("ValidatingWebhookConfiguration", "fail", url, ca,
		map[string]any{"failurePolicy": "Fail", "objectSelector": map[string]any{"matchLabels": map[string]any{"policy": "fail"}}}))
	createConfig(t, h, "ValidatingWebhookConfiguration", hookConfig("ValidatingWebhookConfiguration", "ignore", url, ca,
		map[string]any{"failurePolicy": "Ignore"}))

	code, out, _ := send(t, h, http.MethodPost, "/api/v1/namespaces/default/configmaps", cmBody("f", map[string]string{"policy": "fail"}))
	require.Equal(t, 500, code, "%s", out)
	st := decodeMap(t, out)
	require.Equal(t, "InternalError", st["reason"])
	require.Contains(t, st["message"], `Internal error occurred: failed calling webhook "fail.example.com": failed to call webhook: Post "`+url+`?timeout=10s"`)
	code, out, _ = send(t, h, http.MethodPost, "/api/v1/namespaces/default/configmaps", cmBody("i", nil))
	require.Equal(t, 201, code, "Ignore lets the create through: %s", out)
}

func TestWebhookDryRunAndSelectors(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	hook := startHook(t, func(map[string]any) map[string]any { return map[string]any{"allowed": true} })
	createConfig(t, h, "ValidatingWebhookConfiguration", hookConfig("ValidatingWebhookConfiguration", "sel", hook.srv.URL, hook.caBundle(),
		map[string]any{"namespaceSelector": map[string]any{"matchExpressions": []any{map[string]any{
			"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": []string{"kube-system"}}}}}))
	code, _, _ := send(t, h, http.MethodPost, "/api/v1/namespaces/kube-system/configmaps", cmBody("skipped", nil))
	require.Equal(t, 201, code)
	require.Empty(t, hook.requests(), "the namespace selector leaves kube-system out")

	code, out, _ := send(t, h, http.MethodPost, "/api/v1/namespaces/default/configmaps?dryRun=All", cmBody("dry", nil))
	require.Equal(t, 201, code, "%s", out)
	reqs := hook.requests()
	require.Len(t, reqs, 1)
	require.Equal(t, true, reqs[0]["dryRun"])
	code, _, _ = send(t, h, http.MethodGet, "/api/v1/namespaces/default/configmaps/dry", nil)
	require.Equal(t, 404, code)

	// v1 takes only None and NoneOnDryRun (status-422 as the real server's).
	code, out = do(t, h, http.MethodPost, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", "",
		hookConfig("ValidatingWebhookConfiguration", "effects", hook.srv.URL, hook.caBundle(), map[string]any{"sideEffects": "Some"}))
	require.Equal(t, 422, code, "%s", out)
	require.Equal(t, `ValidatingWebhookConfiguration.admissionregistration.k8s.io "effects" is invalid: webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`,
		decodeMap(t, out)["message"])
}

// TestWebhookSeesPatchRaces: an update admitted on an object another
// write changed meanwhile is admitted again on the newer one.
func TestWebhookSeesPatchRaces(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	_, err := h.Server.Create("configmaps", seedBody("r"))
	require.NoError(t, err)
	var once sync.Once
	hook := startHook(t, func(map[string]any) map[string]any {
		once.Do(func() { // a controller writes while the first admission is out
			_, err := h.Server.Patch("configmaps", "default", "r", []byte(`{"data":{"c":"3"}}`))
			if err != nil {
				panic(fmt.Sprint(err))
			}
		})
		return map[string]any{"allowed": true}
	})
	createConfig(t, h, "ValidatingWebhookConfiguration", hookConfig("ValidatingWebhookConfiguration", "race", hook.srv.URL, hook.caBundle(), nil))
	req := h.NewRequest(t, http.MethodPatch, "/api/v1/namespaces/default/configmaps/r", bytes.NewReader([]byte(`{"data":{"b":"2"}}`)))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := h.Client.Do(req.WithContext(context.Background()))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	obj := getMap(t, h, "/api/v1/namespaces/default/configmaps/r")
	require.Equal(t, map[string]any{"a": "1", "b": "2", "c": "3"}, obj["data"])
	require.Len(t, hook.requests(), 2, "admitted again on the newer object")
}

// TestWebhookSeesTheOldObjectReplaced: a PUT without a resourceVersion
// overwrites whatever is stored, but its admission is redone when another
// write came between, so the webhook's oldObject is the object replaced.
func TestWebhookSeesTheOldObjectReplaced(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	_, err := h.Server.Create("configmaps", seedBody("p"))
	require.NoError(t, err)
	var once sync.Once
	hook := startHook(t, func(map[string]any) map[string]any {
		once.Do(func() {
			if _, err := h.Server.Patch("configmaps", "default", "p", []byte(`{"data":{"c":"3"}}`)); err != nil {
				panic(fmt.Sprint(err))
			}
		})
		return map[string]any{"allowed": true}
	})
	createConfig(t, h, "ValidatingWebhookConfiguration", hookConfig("ValidatingWebhookConfiguration", "put", hook.srv.URL, hook.caBundle(), nil))
	code, out, _ := send(t, h, http.MethodPut, "/api/v1/namespaces/default/configmaps/p", cmBody("p", nil))
	require.Equal(t, 200, code, "%s", out)
	reqs := hook.requests()
	require.Len(t, reqs, 2, "admitted again after the concurrent write")
	old := reqs[1]["oldObject"].(map[string]any)["data"]
	require.Equal(t, map[string]any{"a": "1", "c": "3"}, old, "the second admission sees the object the PUT replaces")
}
