package widgets_test

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	widgets "github.com/kwatch/kwatch/examples/webhook"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/watch"
	"github.com/kwatch/kwatch/webhook"
)

// start runs the example as cmd/widgets does, against the simulator: the
// objects installed, the manager serving the webhooks with a self-signed
// certificate whose CA it writes into them.
func start(t *testing.T) *kube.Client {
	t.Helper()
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	c := srv.Client()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, widgets.Install(ctx, c, "https://"+ln.Addr().String(), nil))
	wh, err := webhook.New(webhook.Options{Listener: ln, SelfSigned: &webhook.SelfSigned{Client: c, Hosts: []string{"127.0.0.1"},
		MutatingWebhookConfigurations: []string{widgets.MutatingName}, ValidatingWebhookConfigurations: []string{widgets.ValidatingName},
		CustomResourceDefinitions: []string{widgets.CRDName}}})
	require.NoError(t, err)
	require.NoError(t, widgets.Setup(wh))
	mgr, err := controller.NewManager(c, controller.ManagerOptions{Webhook: wh})
	require.NoError(t, err)
	kwatchtest.Run(t, mgr.Run)
	<-wh.Ready()
	return c
}

func TestDefaultingAndValidation(t *testing.T) {
	c := start(t)
	ctx := context.Background()
	v2 := client.For(c, widgets.Widgets, client.Options{})
	w, err := v2.Create(ctx, &widgets.WidgetV2{TypeMeta: metav1.TypeMeta{APIVersion: widgets.V2, Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "plain"}}, client.CreateOptions{})
	require.NoError(t, err)
	require.Equal(t, widgets.SpecV2{Size: widgets.DefaultSize, Look: widgets.Look{Color: widgets.DefaultColor}}, w.Spec)
	require.Equal(t, "true", w.Labels[widgets.DefaultedLabel])

	_, err = v2.Create(ctx, &widgets.WidgetV2{TypeMeta: metav1.TypeMeta{APIVersion: widgets.V2, Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "huge"}, Spec: widgets.SpecV2{Size: 11}}, client.CreateOptions{})
	require.True(t, kube.IsInvalid(err), "%v", err)
	require.ErrorContains(t, err, `admission webhook "validate.widgets.example.com" denied the request: spec.size 11 is out of range: 1 to 10`)

	w.Spec.Look.Color = "red"
	_, err = v2.Update(ctx, w, client.UpdateOptions{})
	require.True(t, kube.IsForbidden(err), "%v", err)
	require.ErrorContains(t, err, `spec.look.color cannot change (from "blue" to "red")`)
}

func TestConversion(t *testing.T) {
	c := start(t)
	ctx := context.Background()
	v1 := client.For(c, widgets.WidgetsV1, client.Options{})
	v2 := client.For(c, widgets.Widgets, client.Options{})
	_, err := v1.Create(ctx, &widgets.WidgetV1{TypeMeta: metav1.TypeMeta{APIVersion: widgets.V1, Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "old"}, Spec: widgets.SpecV1{Size: 3, Color: "red"}}, client.CreateOptions{})
	require.NoError(t, err)
	got, err := v2.Get(ctx, "demo", "old", client.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, widgets.SpecV2{Size: 3, Look: widgets.Look{Color: "red"}}, got.Spec)
	require.Equal(t, "true", got.Labels[widgets.DefaultedLabel], "a v1 write is defaulted in v2")

	_, err = v2.Create(ctx, &widgets.WidgetV2{TypeMeta: metav1.TypeMeta{APIVersion: widgets.V2, Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "new"}, Spec: widgets.SpecV2{Size: 2, Look: widgets.Look{Color: "green", Finish: "matte"}}},
		client.CreateOptions{})
	require.NoError(t, err)
	old, err := v1.Get(ctx, "demo", "new", client.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, widgets.SpecV1{Size: 2, Color: "green"}, old.Spec)
	require.Equal(t, "matte", old.Annotations[widgets.FinishAnnotation], "v1 keeps v2's finish in an annotation")
	old.Spec.Size = 4
	_, err = v1.Update(ctx, old, client.UpdateOptions{})
	require.NoError(t, err)
	back, err := v2.Get(ctx, "demo", "new", client.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, widgets.SpecV2{Size: 4, Look: widgets.Look{Color: "green", Finish: "matte"}}, back.Spec, "a v1 round trip loses nothing")
	require.NotContains(t, back.Annotations, widgets.FinishAnnotation)

	for _, list := range []func() ([]string, error){
		func() ([]string, error) { return names(v1.List(ctx, kube.Scope{Namespace: "demo"}, watchOpts())) },
		func() ([]string, error) { return names(v2.List(ctx, kube.Scope{Namespace: "demo"}, watchOpts())) },
	} {
		n, err := list()
		require.NoError(t, err)
		require.Equal(t, []string{"new", "old"}, n)
	}
}

func watchOpts() watch.ListOptions { return watch.ListOptions{} }

// names are the names of a page's items, checking each is in the list's version.
func names[T interface {
	*widgets.WidgetV1 | *widgets.WidgetV2
	GetName() string
}](page *watch.ListPage[T], err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	var out []string
	for _, it := range page.Items {
		out = append(out, it.GetName())
	}
	return out, nil
}
