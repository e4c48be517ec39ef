package suite

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/webhook"
)

// The webhook cases: the target calls webhooks served by package webhook
// in the suite's process over TLS on loopback, configured (namespace-
// scoped) as a user would. The same answers are expected of both targets.
func webhookCases() []Case {
	return []Case{
		{Name: "webhook/validating-denies-create", Run: testWebhookDenies},
		{Name: "webhook/mutating-adds-label-and-default", Run: testWebhookMutates},
		{Name: "webhook/failure-policy-with-webhook-down", Run: testWebhookDown},
		{Name: "webhook/dry-run", Run: testWebhookDryRun},
		{Name: "webhook/crd-conversion", Run: testWebhookConversion},
	}
}

// hookCM is the slim ConfigMap the webhooks decode.
type hookCM struct {
	APIVersion string            `json:"apiVersion,omitempty"`
	Kind       string            `json:"kind,omitempty"`
	Metadata   hookMeta          `json:"metadata"`
	Data       map[string]string `json:"data,omitempty"`
}

type hookMeta struct {
	Name      string            `json:"name,omitempty"`
	Namespace string            `json:"namespace,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

func (c *hookCM) GetNamespace() string              { return c.Metadata.Namespace }
func (c *hookCM) GetName() string                   { return c.Metadata.Name }
func (c *hookCM) GetResourceVersion() string        { return "" }
func (c *hookCM) GetAnnotations() map[string]string { return nil }

// admissionServer is a webhook.Server (its handler only: the TLS is the
// hookServer's) with h at /hook.
func admissionServer(t T, h webhook.Handler) *hookServer {
	wh, err := webhook.New(webhook.Options{SelfSigned: &webhook.SelfSigned{}, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	require.NoError(t, wh.Admission("/hook", h))
	return startHookServer(t, wh)
}

const denyMessage = "the key forbidden is not allowed"

func testWebhookDenies(t T, e *Env) {
	hs := admissionServer(t, webhook.Validating(func(_ context.Context, r *webhook.Request[hookCM]) (webhook.Warnings, error) {
		if _, bad := r.Object.Data["forbidden"]; bad {
			return nil, errors.New(denyMessage)
		}
		return webhook.Warnings{"seen by the conformance webhook"}, nil
	}))
	createHookConfig(t, e, "Validating", hookSpec(e, "deny.conformance.kwatch", hs.srv.URL+"/hook", hs.caPEM(), nil))
	bad := jsonBody(t, configMap("probe", map[string]string{"forbidden": "1"}))
	untilStatus(t, e, cmPath(e, ""), bad, http.StatusForbidden)

	want := `admission webhook "deny.conformance.kwatch" denied the request: ` + denyMessage
	a := call(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, configMap("denied", map[string]string{"forbidden": "1"})))
	require.Equal(t, http.StatusForbidden, a.code, "%s", a.body)
	st := a.status(t)
	require.Equal(t, fullStatus{Kind: "Status", APIVersion: "v1", Metadata: map[string]any{}, Status: "Failure",
		Message: want, Reason: "Forbidden", Code: 403}, st, "%s", a.body)

	cms := client.For(e.Admin, kube.Typed[*hookCM](kube.ConfigMaps), client.Options{})
	_, err := cms.Create(e.Ctx, &hookCM{APIVersion: "v1", Kind: "ConfigMap", Metadata: hookMeta{Namespace: e.NS, Name: "denied2"},
		Data: map[string]string{"forbidden": "1"}}, client.CreateOptions{})
	require.True(t, kube.IsForbidden(err), "kwatch's client: %v", err)
	require.ErrorContains(t, err, want)
	_, err = cms.Create(e.Ctx, &hookCM{APIVersion: "v1", Kind: "ConfigMap", Metadata: hookMeta{Namespace: e.NS, Name: "allowed"},
		Data: map[string]string{"a": "1"}}, client.CreateOptions{})
	require.NoError(t, err)

	if out, err, ok := kubectl(t, e, "-n", e.NS, "create", "configmap", "by-kubectl", "--from-literal=forbidden=1"); ok {
		require.Error(t, err, "%s", out)
		require.Contains(t, out, "error: failed to create configmap: "+want, "kubectl shows the webhook's message")
	}
	if out, err, ok := kubectl(t, e, "-n", e.NS, "create", "configmap", "by-kubectl", "--from-literal=a=1"); ok {
		require.NoError(t, err, "%s", out)
		require.Contains(t, out, "Warning: seen by the conformance webhook", "kubectl shows the webhook's warning")
	}
	bodies := hs.recorded()
	require.NotEmpty(t, bodies)
	rv, err := webhook.DecodeAdmissionReview(bodies[len(bodies)-1])
	require.NoError(t, err)
	require.Equal(t, webhook.Create, rv.Request.Operation)
	require.Equal(t, e.NS, rv.Request.Namespace)
	require.Equal(t, webhook.GroupVersionResource{Version: "v1", Resource: "configmaps"}, rv.Request.Resource)
	require.NotEmpty(t, rv.Request.UserInfo.Username)
	capture(t, e, "admission-review-create.json", bodies[len(bodies)-1])
}

func testWebhookMutates(t T, e *Env) {
	hs := admissionServer(t, webhook.Mutating(func(_ context.Context, _ *webhook.Request[hookCM], cm *hookCM) (webhook.Warnings, error) {
		if cm.Metadata.Labels == nil {
			cm.Metadata.Labels = map[string]string{}
		}
		cm.Metadata.Labels["conformance.kwatch/mutated"] = "true"
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		if cm.Data["mode"] == "" {
			cm.Data["mode"] = "default"
		}
		return nil, nil
	}))
	createHookConfig(t, e, "Mutating", hookSpec(e, "mutate.conformance.kwatch", hs.srv.URL+"/hook", hs.caPEM(), nil))
	eventually(t, e, timeMinute, "the mutating webhook is called", func() bool {
		a := call(t, e, http.MethodPost, cmPath(e, ""), map[string][]string{"dryRun": {"All"}}, ctJSON, jsonBody(t, configMap("probe", nil)))
		return a.code == http.StatusCreated && strings.Contains(string(a.body), "conformance.kwatch/mutated")
	})
	a := mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "m", "labels": map[string]any{"own": "label"}}, "data": map[string]any{"a": "1"}}))
	for _, obj := range []map[string]any{a.obj(t), mustCall(t, e, http.MethodGet, cmPath(e, "m"), nil, "", nil).obj(t)} {
		md := obj["metadata"].(map[string]any)
		require.Equal(t, map[string]any{"own": "label", "conformance.kwatch/mutated": "true"}, md["labels"])
		require.Equal(t, map[string]any{"a": "1", "mode": "default"}, obj["data"])
	}
	a = mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, configMap("set", map[string]string{"mode": "fast"})))
	require.Equal(t, map[string]any{"mode": "fast"}, a.obj(t)["data"], "a value set is kept")
}

func testWebhookDown(t T, e *Env) {
	url := closedURL(t)
	withLabel := func(k, v string) map[string]any {
		return map[string]any{"objectSelector": map[string]any{"matchLabels": map[string]any{k: v}}}
	}
	fail, ignore := withLabel("policy", "fail"), withLabel("policy", "ignore")
	fail["failurePolicy"], ignore["failurePolicy"] = "Fail", "Ignore"
	// One configuration, so both webhooks take effect at once.
	createHookConfig(t, e, "Validating", hookSpec(e, "fail.conformance.kwatch", url, nil, fail),
		hookSpec(e, "ignore.conformance.kwatch", url, nil, ignore))
	labelled := func(name, policy string) []byte {
		return jsonBody(t, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"policy": policy}}})
	}
	untilStatus(t, e, cmPath(e, ""), labelled("probe", "fail"), http.StatusInternalServerError)
	a := call(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, labelled("f", "fail"))
	require.Equal(t, http.StatusInternalServerError, a.code, "%s", a.body)
	st := a.status(t)
	require.Equal(t, "InternalError", st.Reason)
	prefix := `Internal error occurred: failed calling webhook "fail.conformance.kwatch": failed to call webhook: Post "` + url + `?timeout=5s": dial tcp `
	require.True(t, strings.HasPrefix(st.Message, prefix), "message %q, want the prefix %q", st.Message, prefix)
	require.Contains(t, st.Message, "connection refused")
	refusedBeforeStorage(t, e)
	a = call(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, labelled("i", "ignore"))
	require.Equal(t, http.StatusCreated, a.code, "failurePolicy Ignore lets the create through: %s", a.body)
}

// refusedBeforeStorage: kwatch's client takes the 500 of an admission
// webhook that cannot be called for what it is, a write refused before
// anything was stored, not one of unknown outcome (which would hold a
// controller's key for the settle time): its WriteRecorder is told nothing.
func refusedBeforeStorage(t T, e *Env) {
	var told []kube.Written
	rec := e.Admin.WithWriteRecorder(func(_ context.Context, w kube.Written) { told = append(told, w) })
	cms := client.For(rec, kube.Typed[*hookCM](kube.ConfigMaps), client.Options{})
	obj := &hookCM{Metadata: hookMeta{Namespace: e.NS, Name: "f2", Labels: map[string]string{"policy": "fail"}}}
	_, err := cms.Create(context.Background(), obj, client.CreateOptions{})
	se, ok := kube.AsStatus(err)
	require.True(t, ok, "a Status answer: %v", err)
	require.Equal(t, int32(http.StatusInternalServerError), se.Code, "%v", err)
	require.False(t, kube.AnswerOutcomeUnknown(http.MethodPost, se), "refused before storage: %v", err)
	require.Empty(t, told, "no write of unknown outcome is recorded")
}

func testWebhookDryRun(t T, e *Env) {
	var dry atomic.Int64
	hs := admissionServer(t, webhook.HandlerFunc(func(_ context.Context, r *webhook.AdmissionRequest) webhook.AdmissionResponse {
		if r.IsDryRun() {
			dry.Add(1)
		}
		return webhook.Allowed()
	}))
	// v1 refuses a webhook that could not take dry runs.
	some := hookSpec(e, "some.conformance.kwatch", hs.srv.URL+"/hook", hs.caPEM(), map[string]any{"sideEffects": "Some"})
	a := call(t, e, http.MethodPost, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations", nil, ctJSON, jsonBody(t, map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
		"metadata": map[string]any{"name": "some-" + e.NS}, "webhooks": []any{some}}))
	require.Equal(t, http.StatusUnprocessableEntity, a.code, "%s", a.body)
	require.Equal(t, `ValidatingWebhookConfiguration.admissionregistration.k8s.io "some-`+e.NS+
		`" is invalid: webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`, a.status(t).Message)

	createHookConfig(t, e, "Validating", hookSpec(e, "none.conformance.kwatch", hs.srv.URL+"/hook", hs.caPEM(),
		map[string]any{"sideEffects": "NoneOnDryRun"}))
	eventually(t, e, timeMinute, "the webhook sees dry runs", func() bool {
		call(t, e, http.MethodPost, cmPath(e, ""), map[string][]string{"dryRun": {"All"}}, ctJSON, jsonBody(t, configMap("probe", nil)))
		return dry.Load() > 0
	})
	before := dry.Load()
	a = call(t, e, http.MethodPost, cmPath(e, ""), map[string][]string{"dryRun": {"All"}}, ctJSON, jsonBody(t, configMap("dry", nil)))
	require.Equal(t, http.StatusCreated, a.code, "%s", a.body)
	require.Greater(t, dry.Load(), before, "the webhook is told the request is a dry run")
	require.Equal(t, http.StatusNotFound, call(t, e, http.MethodGet, cmPath(e, "dry"), nil, "", nil).code, "a dry run stores nothing")
	at := dry.Load()
	mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, configMap("real", nil)))
	require.Equal(t, at, dry.Load(), "a real write is no dry run")
}

// decodeJSON is a helper of the conversion case.
func decodeJSON(t T, b []byte) map[string]any {
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	return m
}
