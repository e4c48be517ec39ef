package suite

import (
	"context"
	"net/url"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/internal/conformance/harness"
)

func informerCases() []Case {
	return []Case{
		{Name: "informer/converges-under-churn", Run: testInformerChurn},
		{Name: "informer/recovers-after-410", Run: testInformerRecovery},
	}
}

// churnPods is how many pods the churn case creates; a quarter of them are
// then relabelled and another quarter deleted.
const churnPods = 2000

// testInformerChurn: three informers (streaming list, paged list,
// metadata-only) and a handler end up holding exactly the server's state
// after thousands of creates, updates and deletes made while they watch.
func testInformerChurn(t T, e *Env) {
	streaming := runInformer(t, e, informer.Options[*Pod]{Client: e.Admin, ListMode: informer.ListAuto})
	paged := runInformer(t, e, informer.Options[*Pod]{Client: e.Admin, ListMode: informer.ListPaged, PageSize: 100})
	meta := runInformer(t, e, informer.Options[*metav1.PartialObjectMetadata]{Client: e.Admin, MetadataOnly: true})
	hv := newHandlerView[*Pod]()
	_, err := streaming.AddHandler(hv, informer.HandlerOptions{})
	require.NoError(t, err)

	names := podNames("churn", churnPods)
	createPods(t, e, names, map3("phase", "created"))
	forEach(t, churnPods/4, func(i int) error {
		_, err := e.Kube.LabelPod(e.Ctx, e.NS, names[i], "phase", "updated")
		return err
	})
	forEach(t, churnPods/4, func(i int) error { return e.Kube.DeletePod(e.Ctx, e.NS, names[churnPods/4+i]) })

	requireConverges(t, e, map[string]func() map[string]string{
		"streaming informer":     storeView(streaming),
		"paged informer":         storeView(paged),
		"metadata-only informer": storeView(meta),
		"handler":                hv.view,
	})
	require.Len(t, serverState(t, e), churnPods-churnPods/4)
	t.Logf("stats: streaming %+v; paged %+v; metadata %+v", streaming.Stats(), paged.Stats(), meta.Stats())
}

// testInformerRecovery: an informer cut off from a storage-backed server
// while the namespace changes and its resourceVersion is compacted confirms
// its RV, comes back to a 410, relists and holds exactly the server's state
// again, deletes missed while away included.
func testInformerRecovery(t T, e *Env) {
	names := podNames("r", 20)
	createPods(t, e, names, nil)

	cfg := e.Target.StorageConfig()
	proxy := startProxy(t, e, cfg.Host)
	u, err := url.Parse(cfg.Host)
	require.NoError(t, err)
	cfg.Host = u.Scheme + "://" + proxy.Addr
	inf := runInformer(t, e, informer.Options[*Pod]{Client: newClient(t, cfg)})
	hv := newHandlerView[*Pod]()
	_, err = inf.AddHandler(hv, informer.HandlerOptions{})
	require.NoError(t, err)
	requireConverges(t, e, map[string]func() map[string]string{"informer": storeView(inf)})

	// The fault must fire: the informer's watch runs through the proxy, so
	// the cut severs at least that connection.
	require.Positive(t, proxy.Cut(), "the cut found no open connection to sever")
	lastRV := inf.Health().ResourceVersion
	require.NotEmpty(t, lastRV)
	before := inf.Stats()
	createPods(t, e, podNames("r-new", 10), nil)
	forEach(t, 5, func(i int) error { return e.Kube.DeletePod(e.Ctx, e.NS, names[i]) })
	forEach(t, 5, func(i int) error {
		_, err := e.Kube.LabelPod(e.Ctx, e.NS, names[5+i], "moved", "yes")
		return err
	})
	require.NoError(t, e.Target.Expire(e.Ctx, lastRV))
	proxy.Heal()

	requireConverges(t, e, map[string]func() map[string]string{"informer": storeView(inf), "handler": hv.view})
	after := inf.Stats()
	require.Greater(t, after.Gone, before.Gone, "no 410 seen: stats before %+v, after %+v", before, after)
	require.Greater(t, after.Relists, before.Relists, "no relist: stats before %+v, after %+v", before, after)
	// The cut ended the watch early: the informer asked the server to
	// confirm its RV (a one-item NotOlderThan list) before watching again.
	require.Greater(t, after.Confirms, before.Confirms, "no confirmation: stats before %+v, after %+v", before, after)
}

// startProxy runs a harness.Proxy to the host of base until the case ends.
func startProxy(t T, e *Env, base string) *harness.Proxy {
	t.Helper()
	u, err := url.Parse(base)
	require.NoError(t, err)
	p, err := harness.NewProxy(u.Host)
	require.NoError(t, err)
	done := make(chan error, 1) // buffered: read in cleanup
	ctx, cancel := context.WithCancel(e.Ctx)
	go func() { done <- p.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("proxy: %v", err)
		}
	})
	return p
}
