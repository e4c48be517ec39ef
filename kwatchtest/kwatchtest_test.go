package kwatchtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/watch"
)

type configMap struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Data              map[string]string `json:"data"`
}

const seed = `apiVersion: v1
kind: ConfigMap
metadata:
  namespace: demo
  name: a
data:
  k: "1"
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {namespace: demo, name: b}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {namespace: demo, name: web}
  spec: {replicas: 2}
  status: {replicas: 2}
`

// TestConfigAndKubeconfig lists seeded objects through kwatch's client, from
// Config and from the kubeconfig file, over plain HTTP and over TLS.
func TestConfigAndKubeconfig(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "tls"}[tls], func(t *testing.T) {
			srv := kwatchtest.Start(t, kwatchtest.Options{TLS: tls, Token: "secret"})
			srv.MustApply(seed)
			fromFile, err := kube.LoadKubeconfig(kube.KubeconfigOptions{Path: srv.Kubeconfig()})
			require.NoError(t, err)
			for name, cfg := range map[string]*kube.Config{"Config": srv.Config(), "Kubeconfig": fromFile} {
				c, err := kube.NewClient(cfg)
				require.NoError(t, err, name)
				cms := client.For(c, kube.Typed[*configMap](kube.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}), client.Options{})
				page, err := cms.List(t.Context(), kube.Scope{Namespace: "demo"}, watchAll)
				require.NoError(t, err, name)
				require.Len(t, page.Items, 2, name)
				got, err := cms.Get(t.Context(), "demo", "a", client.GetOptions{})
				require.NoError(t, err, name)
				require.Equal(t, "1", got.Data["k"], name)
			}
		})
	}
}

// TestApplyGetList seeds from YAML, JSON and Go values and reads them back.
func TestApplyGetList(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	objs := srv.MustApply(seed,
		[]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"other","name":"c"}}`),
		&configMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "typed"}, Data: map[string]string{"x": "y"}})
	require.Len(t, objs, 5)

	dep, err := srv.Get("deployments.apps", "demo", "web")
	require.NoError(t, err)
	var d struct {
		Status struct {
			Replicas int `json:"replicas"`
		} `json:"status"`
	}
	require.NoError(t, dep.Into(&d))
	require.Equal(t, 2, d.Status.Replicas, "seeded status is kept")

	cms, err := kwatchtest.ListInto[configMap](srv, "configmaps", "demo")
	require.NoError(t, err)
	var names []string
	for _, cm := range cms {
		names = append(names, cm.Name)
	}
	require.Equal(t, []string{"a", "b", "typed"}, names)

	// Applying again replaces.
	srv.MustApply(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"a"},"data":{"k":"2"}}`)
	a, err := srv.Get("configmaps", "demo", "a")
	require.NoError(t, err)
	var cm configMap
	require.NoError(t, a.Into(&cm))
	require.Equal(t, "2", cm.Data["k"])

	// Create takes objects without kind, given the resource.
	created, err := srv.Create("configmaps", &configMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", GenerateName: "gen-"}})
	require.NoError(t, err)
	require.NotEmpty(t, created.UID)
	require.NoError(t, srv.Delete("configmaps", "demo", created.Name))
	_, err = srv.Get("configmaps", "demo", created.Name)
	require.True(t, kwatchtest.IsNotFound(err), "got %v", err)

	_, err = srv.Apply(`{"metadata":{"name":"x"}}`)
	require.ErrorContains(t, err, "no kind")
}

var watchAll = watchListOptions()

// TestCutWatchWait cuts an informer's watch and waits for the fault; the
// informer resumes and sees a change made after the cut.
func TestCutWatchWait(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	_, err := srv.LoadPods(3, 1)
	require.NoError(t, err)
	c, err := kube.NewClient(srv.Config())
	require.NoError(t, err)
	inf, err := informer.New(informer.Options[*metav1.PartialObjectMetadata]{Client: c, Resource: kube.Pods, Form: watch.FormMetadata})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()
	require.True(t, inf.WaitForSync(ctx))

	cut := srv.CutWatch(kwatchtest.FaultOptions{Resource: "pods", AfterEvents: 1})
	require.Equal(t, 0, cut.Fired())
	// The informer's open watch took no fault; the cut applies to its next
	// watch, which a dropped watch makes it open.
	srv.Restart(false)
	// The watch delivers one event, then is cut in the middle of the next.
	for _, name := range []string{"after-restart", "cut-in-the-middle"} {
		_, err = srv.PutPod(kwatchtest.Pod{Namespace: "ns-000", Name: name})
		require.NoError(t, err)
	}
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	require.NoError(t, cut.Wait(wctx))
	require.Equal(t, 1, cut.Fired())

	_, err = srv.PutPod(kwatchtest.Pod{Namespace: "ns-000", Name: "after-cut"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, ok := inf.Store().Get("ns-000/after-cut")
		return ok && inf.Store().Len() == 6
	}, time.Minute, 10*time.Millisecond)
}

// TestErrorFaultWait answers a list with 503 and waits for it.
func TestErrorFaultWait(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	f := srv.Error(503, 1, kwatchtest.FaultOptions{Match: "get"})
	_, err := srv.Get("pods", "x", "y") // in-process reads take no faults
	require.True(t, kwatchtest.IsNotFound(err))
	require.Equal(t, 0, f.Fired())
	c, err := kube.NewClient(srv.Config())
	require.NoError(t, err)
	pods := client.For(c, kube.Typed[*metav1.PartialObjectMetadata](kube.Pods), client.Options{})
	go func() { _, _ = pods.Get(context.Background(), "x", "y", client.GetOptions{}) }()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	require.NoError(t, f.Wait(ctx))
}
