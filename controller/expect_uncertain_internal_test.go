package controller

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
)

// uncertainRig is an expectations with one cache of configmaps in demo
// whose resourceVersion the test sets, and a server whose resourceVersion
// read answers what the test says.
type uncertainRig struct {
	e       *expectations
	storeRV atomic.Uint64
	server  atomic.Int64 // the server's resourceVersion; -1: the read fails
	reads   atomic.Int64
	added   atomic.Int64
	kr      keyRef
	ctx     context.Context // the reconcile's
}

func newUncertainRig(t *testing.T) *uncertainRig {
	t.Helper()
	r := &uncertainRig{kr: keyRef{"ctl", Key{Namespace: "demo", Name: "set"}}}
	r.storeRV.Store(5)
	r.server.Store(-1)
	c := &cacheEntry{name: "configmaps", res: resKeyOf(kube.ConfigMaps), scope: kube.Scope{Namespace: "demo"},
		storeRV: func() string { return strconv.FormatUint(r.storeRV.Load(), 10) },
		state:   func(string, bool) objState { return objState{} }}
	r.e = newExpectations(DefaultExpectationTimeout, slog.New(slog.NewTextHandler(io.Discard, nil)), nil,
		func(kube.Written) []*cacheEntry { return []*cacheEntry{c} })
	r.e.uncertainHolders = func(kube.Written) []*cacheEntry { return []*cacheEntry{c} }
	r.e.serverRV = func(ctx context.Context, _ kube.Resource, _ string) (uint64, error) {
		r.reads.Add(1)
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if rv := r.server.Load(); rv >= 0 {
			return uint64(rv), nil
		}
		return 0, errors.New("no answer")
	}
	r.ctx = context.WithValue(context.Background(), reconcileKey{}, r.kr)
	return r
}

// lose records a create of unknown outcome made by the key's reconcile.
func (r *uncertainRig) lose() {
	r.e.record(r.ctx, kube.Written{Resource: kube.ConfigMaps, Namespace: "demo", Uncertain: true})
}

// reconcile is the gate before the key's reconcile: whether it waits.
func (r *uncertainRig) reconcile(ctx context.Context) bool {
	r.e.settleUncertain(ctx, r.kr)
	return r.e.park(r.kr, func(Key) { r.added.Add(1) })
}

// TestUncertainWaitsTheSettle: before the server can no longer apply a
// write of unknown outcome, nothing shows it (the caches passing any
// version, the server's included, proves nothing) and the server is not
// read. Then the parked key is queued by its timer, without an event, and
// its next reconcile reads the server's version once and waits until the
// cache passed it.
func TestUncertainWaitsTheSettle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newUncertainRig(t)
		r.lose()
		require.True(t, r.reconcile(r.ctx), "the key waits")
		r.storeRV.Store(1000)
		r.e.observed(resKeyOf(kube.ConfigMaps), "demo/x")
		time.Sleep(uncertainSettle - time.Second)
		synctest.Wait()
		require.Zero(t, r.added.Load(), "not queued before the settle")
		require.True(t, r.reconcile(r.ctx), "still waits")
		require.Zero(t, r.reads.Load(), "no read before the settle")
		time.Sleep(time.Second)
		synctest.Wait()
		require.EqualValues(t, 1, r.added.Load(), "queued at the settle by the timer")
		r.server.Store(1010)
		require.True(t, r.reconcile(r.ctx), "waits for the cache to pass the server's version")
		require.EqualValues(t, 1, r.reads.Load())
		r.storeRV.Store(1010)
		r.e.observed(resKeyOf(kube.ConfigMaps), "demo/y")
		require.EqualValues(t, 2, r.added.Load(), "queued by the event that passed it")
		require.False(t, r.reconcile(r.ctx), "runs")
		require.EqualValues(t, 1, r.reads.Load(), "one read")
	})
}

// TestUncertainUnusableVersion: a read that fails, or a server version
// lower than the cache's (not one sequence with its watches', as an
// aggregated server's may be), is not used: the key waits for the bound
// from the settle, then runs.
func TestUncertainUnusableVersion(t *testing.T) {
	for _, tc := range []struct {
		name          string
		server, cache int64
	}{{"read fails", -1, 5}, {"version below the cache's", 3, 5}, {"version 0", 0, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newUncertainRig(t)
				r.server.Store(tc.server)
				r.storeRV.Store(uint64(tc.cache))
				r.lose()
				require.True(t, r.reconcile(r.ctx))
				time.Sleep(uncertainSettle)
				synctest.Wait()
				require.True(t, r.reconcile(r.ctx), "the version is not usable: the key waits")
				require.EqualValues(t, 1, r.reads.Load())
				time.Sleep(DefaultExpectationTimeout - time.Second)
				synctest.Wait()
				require.EqualValues(t, 1, r.added.Load(), "queued once, at the settle")
				time.Sleep(time.Second)
				synctest.Wait()
				require.EqualValues(t, 2, r.added.Load(), "queued at the bound")
				require.False(t, r.reconcile(r.ctx), "runs")
				require.EqualValues(t, 1, r.reads.Load(), "no read again")
			})
		})
	}
}

// TestUncertainReadCutByStop: a read cut off by the reconcile's context
// (the manager stopping, a fence) leaves the write due: the next
// reconcile reads again.
func TestUncertainReadCutByStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newUncertainRig(t)
		r.server.Store(20)
		r.lose()
		time.Sleep(uncertainSettle)
		ctx, cancel := context.WithCancel(r.ctx)
		cancel()
		require.True(t, r.reconcile(ctx), "waits: nothing was read")
		require.True(t, r.reconcile(r.ctx), "waits for the cache to pass 20")
		require.EqualValues(t, 2, r.reads.Load(), "read again")
		r.storeRV.Store(20)
		require.False(t, r.reconcile(r.ctx))
	})
}

// TestUncertainSwept: a key whose write of unknown outcome is never
// waited on (its reconcile returned without error, and nothing queued it
// again) is forgotten once the settle and the bound have passed.
func TestUncertainSwept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newUncertainRig(t)
		r.lose()
		time.Sleep(uncertainSettle + serverRVTimeout + DefaultExpectationTimeout)
		r.e.record(context.Background(), kube.Written{Resource: kube.ConfigMaps, Namespace: "demo", Name: "x", ResourceVersion: "9"})
		r.e.mu.Lock()
		defer r.e.mu.Unlock()
		require.Empty(t, r.e.keys, "forgotten")
		require.Empty(t, r.e.uncertain)
	})
}

// TestUncertainUnreadEndsAtTheBound: a key queued at the settle whose
// reconcile never comes (its shard moved, the controller stopped) is not
// kept for ever: the bound from the settle ends its wait as any other.
func TestUncertainUnreadEndsAtTheBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newUncertainRig(t)
		r.lose()
		require.True(t, r.reconcile(r.ctx))
		time.Sleep(uncertainSettle)
		synctest.Wait()
		require.EqualValues(t, 1, r.added.Load(), "queued at the settle")
		time.Sleep(DefaultExpectationTimeout)
		synctest.Wait()
		require.EqualValues(t, 2, r.added.Load(), "queued again at the bound")
		r.e.mu.Lock()
		defer r.e.mu.Unlock()
		require.Empty(t, r.e.keys, "forgotten")
		require.Zero(t, r.reads.Load())
	})
}
