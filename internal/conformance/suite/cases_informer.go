package suite

import (
	"context"
	"net/url"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/internal/conformance/harness"
	"github.com/kwatch/kwatch/watch"
)

// informerCases are the informer cases in both store modes (informer/...
// in StoreTyped, informer-compact/... in StoreCompact), then the compact
// store's own: protobuf pods and restarts from a snapshot.
func informerCases() []Case {
	var cases []Case
	for _, m := range storeModes {
		cases = append(cases,
			Case{Name: m.prefix + "/converges-under-churn", Run: func(t T, e *Env) { testInformerChurn(t, e, m) }},
			Case{Name: m.prefix + "/recovers-after-410", Run: func(t T, e *Env) { testInformerRecovery(t, e, m) }},
		)
	}
	// protobuf/informer-converges is the StoreTyped twin of this one.
	cases = append(cases, Case{Name: "informer-compact/protobuf-converges", Run: func(t T, e *Env) {
		testProtoInformerIn(t, e, storeModes[1])
	}})
	return append(cases, snapshotCases()...)
}

// churnPods is how many pods the churn case creates; a quarter of them are
// then relabelled and another quarter deleted.
const churnPods = 2000

// testInformerChurn: four informers (streaming list, paged list,
// metadata-only, and a paged one of k8s.io/api pods, protobuf on the real
// server) and a handler end up holding exactly the server's state after
// thousands of creates, updates and deletes made while they watch; a
// handler added with HandlerOptions.NoOld (on the protobuf informer) too,
// given no update's old object.
func testInformerChurn(t T, e *Env, m storeMode) {
	pc, rec := protoClient(t, e.Target.Config(Admin))
	streaming := runInformer(t, e, informer.Options[*Pod]{Client: e.Admin, Tuning: informer.Tuning{ListMode: informer.ListAuto, Store: m.mode}})
	paged := runInformer(t, e, informer.Options[*Pod]{Client: e.Admin, Tuning: informer.Tuning{ListMode: informer.ListPaged, PageSize: 100, Store: m.mode}})
	meta := runInformer(t, e, informer.Options[*metav1.PartialObjectMetadata]{Client: e.Admin, Form: watch.FormMetadata, Tuning: informer.Tuning{Store: m.mode}})
	typed := runInformer(t, e, informer.Options[*corev1.Pod]{Client: pc, Tuning: informer.Tuning{ListMode: informer.ListPaged, PageSize: 100, Store: m.mode}})
	hv := newHandlerView[*Pod]()
	_, err := streaming.AddHandler(hv, informer.HandlerOptions{})
	require.NoError(t, err)
	noOld := newHandlerView[*corev1.Pod]()
	_, err = typed.AddHandler(noOld, informer.HandlerOptions{NoOld: true})
	require.NoError(t, err)

	names := podNames("churn", churnPods)
	createPods(t, e, names, map3("phase", "created"))
	forEach(t, churnPods/4, func(i int) error {
		_, err := e.Kube.LabelPod(e.Ctx, e.NS, names[i], "phase", "updated")
		return err
	})
	forEach(t, churnPods/4, func(i int) error { return e.Kube.DeletePod(e.Ctx, e.NS, names[churnPods/4+i]) })

	requireConverges(t, e, mergeViews(
		storeViews("streaming informer", streaming, m),
		storeViews("paged informer", paged, m),
		storeViews("metadata-only informer", meta, m),
		storeViews("protobuf paged informer", typed, m),
		map[string]func() map[string]string{"handler": hv.view, "NoOld handler": noOld.view},
	))
	require.Zero(t, noOld.oldsGiven(), "the NoOld handler was given old objects")
	require.NotZero(t, hv.oldsGiven(), "the handler without NoOld was given no old object: the check above shows nothing")
	require.Len(t, serverState(t, e), churnPods-churnPods/4)
	requireSameObjects(t, e, e.Admin, watch.ListOptions{Limit: 500}, "streaming informer", streaming)
	requireSameObjects(t, e, e.Admin, watch.ListOptions{Limit: 500, Form: watch.FormMetadata}, "metadata-only informer", meta)
	requireSameObjects(t, e, pc, watch.ListOptions{Limit: 500}, "protobuf paged informer", typed)
	requireCompactHealthy(t, "streaming informer", streaming, m)
	requireCompactHealthy(t, "protobuf paged informer", typed, m)
	if m.compact() {
		requireRawEncoding(t, e, "streaming informer", streaming, false)
		requireRawEncoding(t, e, "protobuf paged informer", typed, true)
	}
	requireEncoding(t, e, rec)
	t.Logf("stats: streaming %+v; paged %+v; metadata %+v; protobuf %+v", streaming.Stats(), paged.Stats(), meta.Stats(), typed.Stats())
}

// testInformerRecovery: two informers (the suite's slim pods in JSON, and
// k8s.io/api pods, protobuf on the real server) cut off from a
// storage-backed server while the namespace changes and their
// resourceVersions are compacted confirm their RVs, come back to a 410,
// relist and hold exactly the server's state again, deletes missed while
// away included.
func testInformerRecovery(t T, e *Env, m storeMode) {
	names := podNames("r", 20)
	createPods(t, e, names, nil)

	cfg := e.Target.StorageConfig()
	proxy := startProxy(t, e, cfg.Host)
	u, err := url.Parse(cfg.Host)
	require.NoError(t, err)
	cfg.Host = u.Scheme + "://" + proxy.Addr
	pcfg := *cfg
	pc, _ := protoClient(t, &pcfg)
	inf := runInformer(t, e, informer.Options[*Pod]{Client: newClient(t, cfg), Tuning: informer.Tuning{Store: m.mode}})
	typed := runInformer(t, e, informer.Options[*corev1.Pod]{Client: pc, Tuning: informer.Tuning{Store: m.mode}})
	hv := newHandlerView[*Pod]()
	_, err = inf.AddHandler(hv, informer.HandlerOptions{})
	require.NoError(t, err)
	thv := newHandlerView[*corev1.Pod]()
	_, err = typed.AddHandler(thv, informer.HandlerOptions{})
	require.NoError(t, err)
	views := mergeViews(storeViews("informer", inf, m), storeViews("protobuf informer", typed, m))
	requireConverges(t, e, views)

	// The fault must fire: the informers' watches run through the proxy,
	// so the cut severs at least those connections.
	require.Positive(t, proxy.Cut(), "the cut found no open connection to sever")
	lastRV := maxRV(t, []string{inf.Health().ResourceVersion, typed.Health().ResourceVersion})
	before, typedBefore := inf.Stats(), typed.Stats()
	createPods(t, e, podNames("r-new", 10), nil)
	forEach(t, 5, func(i int) error { return e.Kube.DeletePod(e.Ctx, e.NS, names[i]) })
	forEach(t, 5, func(i int) error {
		_, err := e.Kube.LabelPod(e.Ctx, e.NS, names[5+i], "moved", "yes")
		return err
	})
	require.NoError(t, e.Target.Expire(e.Ctx, lastRV))
	proxy.Heal()

	views["handler"], views["protobuf handler"] = hv.view, thv.view
	requireConverges(t, e, views)
	requireSameObjects(t, e, e.Admin, watch.ListOptions{}, "informer", inf)
	requireSameObjects(t, e, newClient(t, e.Target.Config(Admin)), watch.ListOptions{}, "protobuf informer", typed)
	requireCompactHealthy(t, "informer", inf, m)
	requireCompactHealthy(t, "protobuf informer", typed, m)
	for name, st := range map[string][2]informer.Stats{"informer": {before, inf.Stats()}, "protobuf informer": {typedBefore, typed.Stats()}} {
		before, after := st[0], st[1]
		require.Greater(t, after.Gone, before.Gone, "%s: no 410 seen: stats before %+v, after %+v", name, before, after)
		require.Greater(t, after.Relists, before.Relists, "%s: no relist: stats before %+v, after %+v", name, before, after)
		// The cut ended the watch early: the informer asked the server to
		// confirm its RV (a one-item NotOlderThan list) before watching again.
		require.Greater(t, after.Confirms, before.Confirms, "%s: no confirmation: stats before %+v, after %+v", name, before, after)
	}
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
