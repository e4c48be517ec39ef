package controller

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/kube"
)

// A third reader's test of 208abcc ("the expectations read a compact
// cache's deletionTimestamp from the metadata alone, never decoding T under
// e.mu"). It failed on 208abcc; stateFunc now reads a compact cache's
// records alone, a miss there being final.
//
// stateFunc (expect_cache.go) read a compact cache twice: RawStore().Get,
// and when that misses, Store().Get. In StoreCompact both read the same
// raw store, and Store().Get decodes the record into T (compactView.Get ->
// compactSide.decode), logging a failure to the manager's Logger directly
// (decode, not decodeHeld). So when the object is absent at the first read
// and the cache applies its ADDED before the second, stateFunc decodes T
// under e.mu, and a version that does not decode is logged to the user's
// handler with e.mu held: the interleaving
//
//	reconcile/cache goroutine, e.mu held     informer goroutine
//	shows -> state: RawStore().Get: miss
//	                                          apply ADDED demo/target
//	Store().Get: hit -> decode fails
//	  -> Logger.Error (user's handler)
//
// The test holds e.mu as pruneLocked/add do and calls cacheEntry.shows
// (the real path) in a loop while the server creates and deletes an
// object that does not decode; the window is a large part of the miss
// path, so it is hit within a few cycles. review2MuSpy records a log made
// while e.mu is held (TryLock fails).
func TestReview3CompactStateFallbackDecodesUnderExpectationsMu(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	require.NoError(t, h.Server.EnsureNamespace("demo"))
	m, spy, r := spiedManager(t, h)
	require.Equal(t, informer.StoreCompact, r.inf.StoreMode())
	entry := r.entry

	runSynced(t, m)

	// A write no store RV reaches: shows reads state(key, false).
	pw := &pendingWrite{ref: objRef{resKeyOf(kube.ConfigMaps), "demo/target"}, rv: math.MaxUint64}
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			m.expect.mu.Lock()
			entry.shows(pw)
			m.expect.mu.Unlock()
		}
	}()
	const cycles = 2000 // a bound on a run that never hits the window
	for i := 0; i < cycles; i++ {
		select {
		case <-spy.seen:
			i = cycles
			continue
		default:
		}
		_, err := h.Server.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"target"},"data":{"a":"x"}}`))
		require.NoError(t, err)
		_, err = h.Server.Delete("configmaps", "demo", "target")
		require.NoError(t, err)
	}
	close(stop)
	<-readerDone

	spy.mu.Lock()
	defer spy.mu.Unlock()
	if len(*spy.held) > 0 {
		t.Fatalf("stateFunc decoded T and the user's log handler ran with expectations.mu held. Stack:\n%s", (*spy.held)[0])
	}
}
