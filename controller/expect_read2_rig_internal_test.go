package controller

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
)

// read2Cache is a cache whose store the test sets object by object, as
// an informer applies watch events or a relist: its resourceVersion and
// what it holds of each object.
type read2Cache struct {
	mu   sync.Mutex
	rv   uint64
	objs map[string]objState
	c    *cacheEntry
}

// apply sets the store's resourceVersion to rv and its object at key to
// st (st.present false: the object is gone).
func (f *read2Cache) apply(rv uint64, key string, st objState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rv = rv
	if st.present {
		f.objs[key] = st
	} else {
		delete(f.objs, key)
	}
}

// at is what a read of the cache returns of key.
func (f *read2Cache) at(key string) objState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.objs[key]
}

// read2Rig is a manager's expectations over caches of one resource that
// the test drives (read2Cache), with the manager's own holders.
type read2Rig struct {
	res kube.Resource
	m   *Manager
	e   *expectations
}

func newRead2Rig(res kube.Resource) *read2Rig {
	r := &read2Rig{res: res, m: &Manager{caches: map[cacheKey]*cacheEntry{}}}
	r.e = newExpectations(DefaultExpectationTimeout, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, r.m.holders)
	r.e.cachesOf = r.m.cachesOf
	return r
}

// cache registers a cache of the resource in sc, at resourceVersion rv,
// holding nothing.
func (r *read2Rig) cache(sc kube.Scope, rv uint64) *read2Cache {
	f := &read2Cache{rv: rv, objs: map[string]objState{}}
	f.c = &cacheEntry{name: r.res.Resource + " [" + sc.String() + "]", res: resKeyOf(r.res), scope: sc,
		storeRV: func() string {
			f.mu.Lock()
			defer f.mu.Unlock()
			return strconv.FormatUint(f.rv, 10)
		},
		state: func(key string, _ bool) objState { return f.at(key) }}
	r.m.mu.Lock()
	r.m.addCacheLocked(cacheKey{res: r.res.GroupVersion() + "/" + r.res.Resource, scope: sc}, f.c)
	r.m.mu.Unlock()
	return f
}

// event applies st at rv to f and tells the expectations, as the cache's
// handler does.
func (r *read2Rig) event(f *read2Cache, rv uint64, key string, st objState) {
	f.apply(rv, key, st)
	r.e.observed(f.c.res, key)
}

// write records this process's write of the object demo/w.Name, made
// outside a reconcile.
func (r *read2Rig) write(w kube.Written) {
	w.Resource, w.Namespace = r.res, "demo"
	r.e.record(context.Background(), w)
}

// blocked reports whether a Get of demo/name from f still waits (for a
// second) for this process's write: false when it may read the cache.
func (r *read2Rig) blocked(t *testing.T, f *read2Cache, name string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := r.e.waitShownErr(ctx, f.c, "demo/"+name)
	if err == nil {
		return false
	}
	require.ErrorIs(t, err, context.DeadlineExceeded, "within the bound the read waits")
	return true
}

// bookmark moves f's resourceVersion to rv, as a bookmark or another
// object's event does: no event of a written object.
func (f *read2Cache) bookmark(rv uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rv = rv
}

// present is a cached object of uid at rv.
func present(uid string, rv uint64) objState { return objState{present: true, uid: uid, rv: rv} }

// waitShownErr is waitShown's error alone.
func (e *expectations) waitShownErr(ctx context.Context, c *cacheEntry, key string) error {
	_, err := e.waitShown(ctx, c, key)
	return err
}
