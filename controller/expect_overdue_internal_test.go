package controller

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/kube"
)

// TestOverdueReadIsNotShown: the cache lags its watch by 40 s; this
// process patches ConfigMap a, then b once a second. Past the bound a
// Get of a gets a *NotShownError, not the cached a from before the patch,
// though b's writes went on being recorded. Once the cache shows the
// patch, the Get returns it and a's write is no longer kept. Before the
// fix b's writes swept a's away at the bound and the Get returned the
// stale a without an error.
func TestOverdueReadIsNotShown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := sim.New(sim.Options{})
		require.NoError(t, err)
		require.NoError(t, srv.EnsureNamespace("demo"))
		for _, name := range []string{"a", "b"} {
			_, err = srv.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"`+name+`"}}`))
			require.NoError(t, err)
		}
		m, err := NewManager(memClient(t, srv, "api", func(*http.Request) {}),
			ManagerOptions{Namespace: "demo", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		require.NoError(t, err)
		cms := kube.Typed[*cmObj](kube.ConfigMaps)
		cache, err := Cache(m, cms)
		require.NoError(t, err)
		writes := client.For(m.Client(), cms, client.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		defer func() { cancel(); require.NoError(t, <-done) }()

		a := Key{Namespace: "demo", Name: "a"}
		old, ok, err := cache.Get(ctx, a) // after the sync
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, srv.SetWatchLag("configmaps", 40*time.Second))
		defer func() { require.NoError(t, srv.SetWatchLag("configmaps", 0)) }()
		up, err := writes.Patch(ctx, "demo", "a", client.MergePatch, []byte(`{"metadata":{"annotations":{"n":"1"}}}`), client.PatchOptions{})
		require.NoError(t, err)
		t0 := time.Now()
		for i := range 35 {
			time.Sleep(time.Second)
			_, err := writes.Patch(ctx, "demo", "b", client.MergePatch, []byte(fmt.Sprintf(`{"metadata":{"annotations":{"n":"%d"}}}`, i)), client.PatchOptions{})
			require.NoError(t, err)
		}
		synctest.Wait()
		got, _, err := cache.Get(ctx, a)
		var ns *NotShownError
		require.ErrorAs(t, err, &ns, "35 s after the patch the cache, 40 s behind, still holds resourceVersion %s (got %v)", old.ResourceVersion, got)
		require.Contains(t, ns.Write, "at resourceVersion "+up.ResourceVersion)

		time.Sleep(time.Until(t0.Add(45 * time.Second)))
		synctest.Wait()
		got, ok, err = cache.Get(ctx, a)
		require.NoError(t, err, "the cache has shown the patch")
		require.True(t, ok)
		require.Equal(t, up.ResourceVersion, got.ResourceVersion)
		m.expect.mu.Lock()
		defer m.expect.mu.Unlock()
		require.NotContains(t, m.expect.objects, objRef{resKeyOf(kube.ConfigMaps), "demo/a"}, "a shown write is not kept")
		require.NotContains(t, m.expect.overdue, objRef{resKeyOf(kube.ConfigMaps), "demo/a"})
	})
}

// overdueRig is an expectations with one cache of configmaps in demo
// whose resourceVersion the test sets and which holds no object.
type overdueRig struct {
	e       *expectations
	c       *cacheEntry
	storeRV atomic.Uint64
}

func newOverdueRig() *overdueRig {
	r := &overdueRig{}
	r.storeRV.Store(5)
	r.c = &cacheEntry{name: "configmaps", res: resKeyOf(kube.ConfigMaps), scope: kube.Scope{Namespace: "demo"},
		storeRV: func() string { return strconv.FormatUint(r.storeRV.Load(), 10) },
		state:   func(string, bool) objState { return objState{} }}
	r.e = newExpectations(DefaultExpectationTimeout, slog.New(slog.NewTextHandler(io.Discard, nil)), nil,
		func(kube.Written) []*cacheEntry { return []*cacheEntry{r.c} })
	return r
}

// write records this process's write of ConfigMap name at rv, made
// outside a reconcile.
func (r *overdueRig) write(name string, rv uint64) {
	r.e.record(context.Background(), kube.Written{Resource: kube.ConfigMaps, Namespace: "demo", Name: name,
		ResourceVersion: strconv.FormatUint(rv, 10)})
}

// read is what a Get of ConfigMap name would wait for: nil when the
// cache may be read.
func (r *overdueRig) read(name string) error {
	return r.e.waitShownErr(context.Background(), r.c, "demo/"+name)
}

// kept reports whether a read of name still waits on a write of it.
func (r *overdueRig) kept(name string) bool {
	r.e.mu.Lock()
	defer r.e.mu.Unlock()
	_, ok := r.e.objects[objRef{r.c.res, "demo/" + name}]
	return ok
}

// TestOverdueDroppedWhenPassed: a write past the bound that the cache
// does not show is kept for reads, however many other writes are recorded
// after it, though the key that wrote it gave up on it at the bound and
// the manager stopped; it is dropped once the cache passes it, without an
// event of its object: the cache's resourceVersion moved on through
// another object's. Before the fix the later writes dropped it at the
// bound, and the read returned the cache's older object.
func TestOverdueDroppedWhenPassed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newOverdueRig()
		kr := keyRef{"ctl", Key{Namespace: "demo", Name: "x"}}
		r.e.record(context.WithValue(context.Background(), reconcileKey{}, kr),
			kube.Written{Resource: kube.ConfigMaps, Namespace: "demo", Name: "x", ResourceVersion: "10"})
		var added atomic.Int64
		require.True(t, r.e.park(kr, func(Key) { added.Add(1) }), "the key waits for its write")
		for i := range 40 {
			time.Sleep(time.Second)
			r.write("y", uint64(11+i))
		}
		synctest.Wait()
		require.EqualValues(t, 1, added.Load(), "the key ran at the bound")
		r.e.stop()
		var ns *NotShownError
		require.ErrorAs(t, r.read("x"), &ns, "40 s after the write the cache has not shown it")
		require.Equal(t, "configmaps demo/x at resourceVersion 10", ns.Write)
		require.True(t, r.kept("x"))
		r.e.mu.Lock()
		require.Contains(t, r.e.overdue, objRef{r.c.res, "demo/x"})
		require.Empty(t, r.e.keys, "the key forgot the write")
		r.e.mu.Unlock()

		r.storeRV.Store(60) // the cache applied y's events, not x's
		time.Sleep(time.Second)
		r.e.observed(r.c.res, "demo/y")
		require.NoError(t, r.read("x"))
		require.False(t, r.kept("x"), "the cache passed x's write: it is dropped")
		require.Empty(t, r.e.overdue)
		require.Empty(t, r.e.objects)
	})
}

// TestOverdueReplacedByALaterWrite: a later write of an object whose
// write is past the bound and not shown replaces it: a read waits for the
// later one, within its own bound, and is answered when the cache shows
// it. Before the fix the read of the overdue write returned the cache's
// older object.
func TestOverdueReplacedByALaterWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newOverdueRig()
		r.write("x", 10)
		for i := range 35 {
			time.Sleep(time.Second)
			r.write("y", uint64(11+i))
		}
		var ns *NotShownError
		require.ErrorAs(t, r.read("x"), &ns)
		require.Contains(t, ns.Write, "at resourceVersion 10")

		r.write("x", 100)
		r.e.mu.Lock()
		require.EqualValues(t, 100, r.e.objects[objRef{r.c.res, "demo/x"}].rv, "the later write replaced it")
		require.NotContains(t, r.e.overdue, objRef{r.c.res, "demo/x"}, "the later write is within its bound")
		r.e.mu.Unlock()
		read := make(chan error, 1)
		go func() { read <- r.read("x") }()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		require.Empty(t, read, "the read waits for the later write")
		r.storeRV.Store(100)
		r.e.observed(r.c.res, "demo/x")
		synctest.Wait()
		require.NoError(t, <-read)
		require.False(t, r.kept("x"))
	})
}
