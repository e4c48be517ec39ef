package suite

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/controller"
	widgets "github.com/kwatch/kwatch/examples/webhook"
	"github.com/kwatch/kwatch/webhook"
)

// testWebhookConversion runs examples/webhook as its command does: the
// CRD (v1, and v2 stored) and the webhook configurations installed, a
// manager serving the webhooks with a self-signed CA it writes into them;
// a dry-run create in v1 shows the target converts through it. The CRD's
// conversion webhook is then pointed at a recorder in front of the same
// handlers (to keep the ConversionReview the target sends). A
// widget created in v1 is read in v2 and back, one created in v2 read in
// v1 and written back there, both lists are read, and every object served
// in v1 is compared field for field with the example's own conversion of
// the object served in v2.
func testWebhookConversion(t T, e *Env) {
	wh := startWidgets(t, e)
	v1 := "/apis/" + widgets.Group + "/v1/namespaces/" + e.NS + "/widgets"
	v2 := "/apis/" + widgets.Group + "/v2/namespaces/" + e.NS + "/widgets"
	widget := func(apiVersion, name string, spec map[string]any) []byte {
		return jsonBody(t, map[string]any{"apiVersion": apiVersion, "kind": "Widget", "metadata": map[string]any{"name": name}, "spec": spec})
	}
	converted := func(what string) {
		eventually(t, e, timeMinute, what, func() bool {
			a := call(t, e, http.MethodPost, v1, map[string][]string{"dryRun": {"All"}}, ctJSON, widget(widgets.V1, "probe", map[string]any{"size": 1}))
			return a.code == http.StatusCreated && slices.Contains(keys(a.obj(t)["metadata"].(map[string]any)["labels"]), widgets.DefaultedLabel)
		})
	}
	// First through the example's own server, trusting the CA it wrote
	// into the CRD: a create in v1 is stored in v2, so converted there.
	crdPath := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + widgets.CRDName
	crd := mustCall(t, e, http.MethodGet, crdPath, nil, "", nil).obj(t)
	cc := crd["spec"].(map[string]any)["conversion"].(map[string]any)["webhook"].(map[string]any)["clientConfig"].(map[string]any)
	require.Equal(t, base64.StdEncoding.EncodeToString(wh.CACertPEM()), cc["caBundle"], "the example wrote its CA into the CRD")
	converted("the example's server converts and defaults a widget created in v1")

	rec := startHookServer(t, wh)
	mustCall(t, e, http.MethodPatch, crdPath, nil, ctMerge, jsonBody(t, map[string]any{"spec": map[string]any{"conversion": map[string]any{
		"strategy": "Webhook", "webhook": map[string]any{"conversionReviewVersions": []any{"v1"},
			"clientConfig": map[string]any{"url": rec.srv.URL + widgets.ConvertPath, "caBundle": rec.caPEM()}}}}}))
	converted("widgets are served in v1 through the recorder, converted and defaulted")

	created := mustCall(t, e, http.MethodPost, v1, nil, ctJSON, widget(widgets.V1, "old", map[string]any{"size": 3, "color": "red"})).obj(t)
	require.Equal(t, widgets.V1, created["apiVersion"])
	require.Equal(t, map[string]any{"size": float64(3), "color": "red"}, created["spec"])
	inV2 := mustCall(t, e, http.MethodGet, v2+"/old", nil, "", nil).obj(t)
	require.Equal(t, map[string]any{"size": float64(3), "look": map[string]any{"color": "red"}}, inV2["spec"])
	require.Equal(t, "true", inV2["metadata"].(map[string]any)["labels"].(map[string]any)[widgets.DefaultedLabel])

	mustCall(t, e, http.MethodPost, v2, nil, ctJSON, widget(widgets.V2, "new", map[string]any{"size": 2, "look": map[string]any{"color": "green", "finish": "matte"}}))
	old := mustCall(t, e, http.MethodGet, v1+"/new", nil, "", nil).obj(t)
	require.Equal(t, "matte", old["metadata"].(map[string]any)["annotations"].(map[string]any)[widgets.FinishAnnotation])
	old["spec"].(map[string]any)["size"] = 4
	mustCall(t, e, http.MethodPut, v1+"/new", nil, ctJSON, jsonBody(t, old))
	back := mustCall(t, e, http.MethodGet, v2+"/new", nil, "", nil).obj(t)
	require.Equal(t, map[string]any{"size": float64(4), "look": map[string]any{"color": "green", "finish": "matte"}}, back["spec"],
		"a round trip through v1 loses nothing")

	list1 := mustCall(t, e, http.MethodGet, v1, nil, "", nil).obj(t)
	list2 := mustCall(t, e, http.MethodGet, v2, nil, "", nil).obj(t)
	require.Equal(t, widgets.V1, list1["apiVersion"])
	require.Equal(t, widgets.V2, list2["apiVersion"])
	items1, items2 := list1["items"].([]any), list2["items"].([]any)
	require.Len(t, items1, 2)
	require.Len(t, items2, 2)
	conv := widgets.Converter()
	for i := range items2 {
		raw, _ := json.Marshal(items2[i])
		resp := conv.Convert(&webhook.ConversionRequest{UID: "local", DesiredAPIVersion: widgets.V1, Objects: []json.RawMessage{raw}})
		require.Equal(t, "Success", resp.Result.Status, resp.Result.Message)
		require.Equal(t, decodeJSON(t, resp.ConvertedObjects[0]), items1[i], "item %d: served in v1 = the example's conversion of v2", i)
		name := items2[i].(map[string]any)["metadata"].(map[string]any)["name"].(string)
		require.Equal(t, items1[i], mustCall(t, e, http.MethodGet, v1+"/"+name, nil, "", nil).obj(t), "get and list agree in v1")
		require.Equal(t, items2[i], mustCall(t, e, http.MethodGet, v2+"/"+name, nil, "", nil).obj(t), "get and list agree in v2")
	}
	bodies := rec.recorded()
	require.NotEmpty(t, bodies, "the target called the conversion webhook")
	most := 0
	for _, b := range bodies {
		rv, err := webhook.DecodeConversionReview(b)
		require.NoError(t, err)
		if n := len(rv.Request.Objects); n > most {
			most = n
			capture(t, e, "conversion-review.json", b)
		}
	}
}

func keys(v any) []string {
	m, _ := v.(map[string]any)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// startWidgets installs the example with its webhooks at a loopback port
// and runs its manager until the case ends. The webhook configurations
// are removed at the end; the CRD stays (its objects are the case's
// namespace's, and the next run's Install updates it).
func startWidgets(t T, e *Env) *webhook.Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, widgets.Install(e.Ctx, e.Admin, "https://"+ln.Addr().String(), nil))
	t.Cleanup(func() {
		for _, p := range []string{"mutatingwebhookconfigurations/" + widgets.MutatingName, "validatingwebhookconfigurations/" + widgets.ValidatingName} {
			cleanupDelete(t, e, "/apis/admissionregistration.k8s.io/v1/"+p)
		}
	})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	wh, err := webhook.New(webhook.Options{Listener: ln, Logger: quiet, SelfSigned: &webhook.SelfSigned{Client: e.Admin,
		Hosts: []string{"127.0.0.1"}, CustomResourceDefinitions: []string{widgets.CRDName},
		MutatingWebhookConfigurations: []string{widgets.MutatingName}, ValidatingWebhookConfigurations: []string{widgets.ValidatingName}}})
	require.NoError(t, err)
	require.NoError(t, widgets.Setup(wh))
	mgr, err := controller.NewManager(e.Admin, controller.ManagerOptions{Webhook: wh, Logger: quiet})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.WithoutCancel(e.Ctx))
	done := make(chan error, 1)
	go func() { done <- mgr.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	select {
	case <-wh.Ready():
	case err := <-done:
		require.FailNow(t, "the example's manager stopped", "%v", err)
	}
	// The self-signed CA is in the configurations: the target calls the
	// example's own TLS server for admission.
	cfg := mustCall(t, e, http.MethodGet, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"+widgets.ValidatingName, nil, "", nil).obj(t)
	ca := cfg["webhooks"].([]any)[0].(map[string]any)["clientConfig"].(map[string]any)["caBundle"]
	require.Equal(t, base64.StdEncoding.EncodeToString(wh.CACertPEM()), ca)
	return wh
}
