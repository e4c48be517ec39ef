package suite

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/internal/conformance/harness"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

func overdueCases() []Case {
	return []Case{
		{Name: "controller/read-past-the-bound-is-not-stale", Run: testReadPastTheBound},
		{Name: "controller/write-shown-by-a-relist", Run: testWriteShownByARelist},
		{Name: "controller/read-from-a-cache-out-of-the-writes-scope", Run: testReadOutOfScope},
		{Name: "controller/read-after-a-status-delete-of-a-newer-incarnation", Run: testStatusDeleteNewerIncarnation},
	}
}

// The manager's bound and the configmaps' watch lag of testReadPastTheBound:
// the lag is a lower bound on when the cache can show a write, so a read
// past the bound and before the lag cannot find it shown.
const (
	overdueBound = 500 * time.Millisecond
	overdueLag   = 5 * time.Second
)

// testReadPastTheBound: a manager whose configmaps' watch is held back by
// a harness.LagProxy for overdueLag, with ExpectationTimeout overdueBound,
// patches ConfigMap a through its client, then b after the bound (a write
// that swept a's record before the fix). A Reader.Get of a never returns
// the version from before the patch: it gets a *NotShownError, first after
// waiting the bound, until the cache shows the patch, and then the patched
// a. Only lower bounds on time are relied on.
func testReadPastTheBound(t T, e *Env) {
	l := newLagged(t, e, e.Target.Config(Admin), overdueBound)
	require.NoError(t, l.p.SetLag("configmaps", overdueLag))

	direct := client.For(newClient(t, e.Target.Config(Admin)), kube.Typed[*corev1.ConfigMap](configMapsRes), client.Options{})
	for _, name := range []string{"a", "b"} {
		_, err := direct.Create(e.Ctx, newConfigMap(e.NS, name, map[string]string{"v": "0"}), client.CreateOptions{})
		require.NoError(t, err)
	}
	cms, err := controller.Cache(l.mgr, kube.Typed[*corev1.ConfigMap](configMapsRes))
	require.NoError(t, err)
	l.run()
	// Both ConfigMaps listed (a list through the proxy is not delayed).
	eventually(t, e, time.Minute, "the cache lists a and b", func() bool {
		_, okA, errA := cms.Get(e.Ctx, controller.Key{Namespace: e.NS, Name: "a"})
		_, okB, errB := cms.Get(e.Ctx, controller.Key{Namespace: e.NS, Name: "b"})
		return errA == nil && errB == nil && okA && okB
	})

	writes := client.For(l.mgr.Client(), kube.Typed[*corev1.ConfigMap](configMapsRes), client.Options{})
	patch := []byte(`{"data":{"v":"1"}}`)
	patched, err := writes.Patch(e.Ctx, e.NS, "a", client.MergePatch, patch, client.PatchOptions{})
	require.NoError(t, err)
	written, err := strconv.ParseUint(patched.ResourceVersion, 10, 64)
	require.NoError(t, err)
	key := controller.Key{Namespace: e.NS, Name: "a"}

	// notStale reads a: the patched version, or a *NotShownError; never
	// the one from before the patch. It reports whether it was shown.
	notStale := func(what string) bool {
		t.Helper()
		got, ok, err := cms.Get(e.Ctx, key)
		var ns *controller.NotShownError
		if errors.As(err, &ns) {
			return false
		}
		require.NoError(t, err, what)
		require.True(t, ok, what)
		rv, err := strconv.ParseUint(got.ResourceVersion, 10, 64)
		require.NoError(t, err)
		require.GreaterOrEqual(t, rv, written, "%s: a read returned a from before this process's patch", what)
		require.Equal(t, "1", got.Data["v"], what)
		return true
	}
	_, _, err = cms.Get(e.Ctx, key)
	var ns *controller.NotShownError
	require.ErrorAs(t, err, &ns, "a read within the lag, past the bound")
	_, err = writes.Patch(e.Ctx, e.NS, "b", client.MergePatch, patch, client.PatchOptions{})
	require.NoError(t, err)
	notStale("after a later write of b")
	eventually(t, e, time.Minute, "the cache shows the patch of a", func() bool { return notStale("while the cache catches up") })
}

// testWriteShownByARelist: a manager (bound ten minutes) creates ConfigMap
// x through its client while a harness.LagProxy holds its cache's watch;
// another client deletes x, the history is compacted past both, and the
// proxy, in front of a server that reads storage, drops the watch with
// the events of x it held. The cache's next watch is refused (410), and it relists past x's create and delete, with
// no event of x. A Reader.Get of x, waiting since the create, then
// returns, and finds no x, well within the bound: before the re-check of
// writes shown without an event of their object it waited the bound.
func testWriteShownByARelist(t T, e *Env) {
	// A server that reads storage: kube-apiserver's watch cache would
	// serve the next watch from its own history, compaction or not.
	l := newLagged(t, e, e.Target.StorageConfig(), 10*time.Minute)

	direct := client.For(newClient(t, e.Target.Config(Admin)), kube.Typed[*corev1.ConfigMap](configMapsRes), client.Options{})
	_, err := direct.Create(e.Ctx, newConfigMap(e.NS, "other", map[string]string{"v": "0"}), client.CreateOptions{})
	require.NoError(t, err)
	cms, err := controller.Cache(l.mgr, kube.Typed[*corev1.ConfigMap](configMapsRes))
	require.NoError(t, err)
	shared, err := controller.Informer(l.mgr, kube.Typed[*corev1.ConfigMap](configMapsRes))
	require.NoError(t, err)
	l.run()
	eventually(t, e, time.Minute, "the cache lists other", func() bool {
		_, ok, err := cms.Get(e.Ctx, controller.Key{Namespace: e.NS, Name: "other"})
		return err == nil && ok
	})

	require.NoError(t, l.p.SetLag("configmaps", time.Hour))
	writes := client.For(l.mgr.Client(), kube.Typed[*corev1.ConfigMap](configMapsRes), client.Options{})
	_, err = writes.Create(e.Ctx, newConfigMap(e.NS, "x", map[string]string{"v": "1"}), client.CreateOptions{})
	require.NoError(t, err)
	type read struct {
		ok  bool
		err error
	}
	got := make(chan read, 1)
	go func() {
		_, ok, err := cms.Get(e.Ctx, controller.Key{Namespace: e.NS, Name: "x"})
		got <- read{ok, err}
	}()
	require.NoError(t, direct.Delete(e.Ctx, e.NS, "x", client.DeleteOptions{}))
	list, err := direct.List(e.Ctx, kube.Scope{Namespace: e.NS}, watch.ListOptions{})
	require.NoError(t, err)
	require.NoError(t, e.Target.Expire(e.Ctx, list.ResourceVersion))
	l.p.Drop("configmaps")
	require.NoError(t, l.p.SetLag("configmaps", 0))

	select {
	case r := <-got:
		require.NoError(t, r.err, "the read of x")
		require.False(t, r.ok, "the cache relisted past x's delete")
		st := shared.Stats()
		require.True(t, st.Gone >= 1 && st.Relists >= 2, "the cache's next watch was refused and it relisted: %+v", st)
	case <-time.After(2 * time.Minute):
		require.Fail(t, "the read of x still waits two minutes after the relist that shows the write")
	}
}

// Lags of testReadOutOfScope: every configmaps watch is held back by
// scopeLag; scopeGap apart, another writer's create and this process's
// relabel reach the caches that far apart, a window in which a cache
// holds the created version only.
const (
	scopeLag = 3 * time.Second
	scopeGap = 2 * time.Second
)

// testReadOutOfScope: a manager caches the ConfigMaps labelled app=a and
// those labelled app=b, both watches lagging by scopeLag. Another writer
// makes x with app=a; this process then relabels x to app=b. The write
// is recorded against the app=b cache, which takes x; the app=a cache,
// which did not hold x then, comes to hold the created version for a
// while before it sees x leave. A Reader.Get of x from the app=a cache
// never returns a version older than the relabel: it finds no x, or waits.
// Before expect_readers.go it returned the created x in that window.
func testReadOutOfScope(t T, e *Env) {
	l := newLagged(t, e, e.Target.Config(Admin), 10*time.Minute)
	require.NoError(t, l.p.SetLag("configmaps", scopeLag))

	res := kube.Typed[*corev1.ConfigMap](configMapsRes)
	scopeA := kube.Scope{Namespace: e.NS, LabelSelector: "app=a"}
	a, err := controller.CacheIn(l.mgr, res, scopeA)
	require.NoError(t, err)
	infA, err := controller.InformerIn(l.mgr, res, scopeA)
	require.NoError(t, err)
	_, err = controller.CacheIn(l.mgr, res, kube.Scope{Namespace: e.NS, LabelSelector: "app=b"})
	require.NoError(t, err)
	l.run()
	require.True(t, infA.WaitForSync(e.Ctx))

	direct := client.For(newClient(t, e.Target.Config(Admin)), res, client.Options{})
	x := newConfigMap(e.NS, "x", nil)
	x.Labels = map[string]string{"app": "a"}
	_, err = direct.Create(e.Ctx, x, client.CreateOptions{})
	require.NoError(t, err)
	select { // only widens the window; nothing below relies on it
	case <-time.After(scopeGap):
	case <-e.Ctx.Done():
	}
	writes := client.For(l.mgr.Client(), res, client.Options{})
	relabelled, err := writes.Patch(e.Ctx, e.NS, "x", client.MergePatch, []byte(`{"metadata":{"labels":{"app":"b"}}}`), client.PatchOptions{})
	require.NoError(t, err)
	written, err := strconv.ParseUint(relabelled.ResourceVersion, 10, 64)
	require.NoError(t, err)

	key := controller.Key{Namespace: e.NS, Name: "x"}
	reads := 0
	eventually(t, e, time.Minute, "the app=a cache passes the relabel", func() bool {
		past := infA.Store().ResourceVersion() // read before the Get: a Get after it is the last one needed
		got, ok, err := a.Get(e.Ctx, key)
		require.NoError(t, err)
		reads++
		if ok {
			rv, err := strconv.ParseUint(got.ResourceVersion, 10, 64)
			require.NoError(t, err)
			require.GreaterOrEqual(t, rv, written, "read %d returned x from before this process's relabel", reads)
		}
		n, err := strconv.ParseUint(past, 10, 64)
		return err == nil && n >= written
	})
}

// testStatusDeleteNewerIncarnation: a manager caches ConfigMap x (u1);
// with its watch lagging by scopeLag, another writer deletes x and makes
// it again (u2), and this process deletes u2, which kube-apiserver
// answers with a Status (a uid, no resourceVersion). The cache still
// holds u1. A Reader.Get of x returns neither u1 nor u2 at any time: it
// waits until the cache has passed the server's resourceVersion read
// after the delete (a later create of y in the namespace moves it there),
// then finds no x. Before the fix it returned u1 at once.
func testStatusDeleteNewerIncarnation(t T, e *Env) {
	l := newLagged(t, e, e.Target.Config(Admin), 10*time.Minute)

	res := kube.Typed[*corev1.ConfigMap](configMapsRes)
	direct := client.For(newClient(t, e.Target.Config(Admin)), res, client.Options{})
	first, err := direct.Create(e.Ctx, newConfigMap(e.NS, "x", map[string]string{"v": "1"}), client.CreateOptions{})
	require.NoError(t, err)
	cms, err := controller.Cache(l.mgr, res)
	require.NoError(t, err)
	inf, err := controller.Informer(l.mgr, res)
	require.NoError(t, err)
	l.run()
	key := controller.Key{Namespace: e.NS, Name: "x"}
	eventually(t, e, time.Minute, "the cache holds x", func() bool {
		got, ok, err := cms.Get(e.Ctx, key)
		return err == nil && ok && got.UID == first.UID
	})

	require.NoError(t, l.p.SetLag("configmaps", scopeLag))
	require.NoError(t, direct.Delete(e.Ctx, e.NS, "x", client.DeleteOptions{}))
	second, err := direct.Create(e.Ctx, newConfigMap(e.NS, "x", map[string]string{"v": "2"}), client.CreateOptions{})
	require.NoError(t, err)
	writes := client.For(l.mgr.Client(), res, client.Options{})
	require.NoError(t, writes.Delete(e.Ctx, e.NS, "x", client.DeleteOptions{}))
	y, err := direct.Create(e.Ctx, newConfigMap(e.NS, "y", nil), client.CreateOptions{})
	require.NoError(t, err)
	after, err := strconv.ParseUint(y.ResourceVersion, 10, 64)
	require.NoError(t, err)

	reads := 0
	eventually(t, e, time.Minute, "the cache passes the create of y", func() bool {
		past := inf.Store().ResourceVersion() // read before the Get: a Get after it is the last one needed
		got, ok, err := cms.Get(e.Ctx, key)
		require.NoError(t, err)
		reads++
		require.False(t, ok, "read %d returned x (uid %s; u1 %s, u2 %s), deleted by this process or before it",
			reads, objUID(got), first.UID, second.UID)
		n, err := strconv.ParseUint(past, 10, 64)
		return err == nil && n >= after
	})
}

// objUID is cm's uid, "" for none.
func objUID(cm *corev1.ConfigMap) string {
	if cm == nil {
		return ""
	}
	return string(cm.UID)
}

// lagged is a manager on e's namespace whose requests pass p, a
// harness.LagProxy in front of upstream, with ExpectationTimeout bound.
// Make its caches, then call run; both stop with the case.
type lagged struct {
	p   *harness.LagProxy
	mgr *controller.Manager
	run func()
}

func newLagged(t T, e *Env, upstream *kube.Config, bound time.Duration) lagged {
	p, err := harness.NewLagProxy(upstream)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(e.Ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Serve(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	mgr, err := controller.NewManager(newClient(t, &kube.Config{Host: p.URL}), controller.ManagerOptions{Namespace: e.NS,
		ExpectationTimeout: bound, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	return lagged{p: p, mgr: mgr, run: func() { wg.Go(func() { _ = mgr.Run(ctx) }) }}
}
