package informer

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/watch"
)

// TestReview4HandlerAddedAfterRestoreGetsTheStore (fourth reader; it
// failed on 07f149b, before AddHandler replayed a filled store whether or
// not the informer had synced): AddHandler promises a handler added
// while the informer runs "every object in the store as an add, then live
// changes". A handler added after Run restored the store from a snapshot
// but before the confirmation marked it synced was given nothing:
// AddHandler replayed the store only when inf.synced was set, the restore
// (restoreCommitLocked) queued the restored objects only to the handlers
// registered then, and the confirmation's markSynced queues nothing. The
// late handler's HasSynced turns true with none of the restored objects
// delivered, and it never gets them (no object changes afterwards).
//
// Interleaving: Run -> snap.restore -> restoreCommitLocked (handlers: the
// early one only) -> confirmation request in flight (synced false) ->
// AddHandler (synced false: no replay; appended) -> the server confirms
// the snapshot's RV -> loop's markSynced (r.q.markSynced, nothing queued).
func TestReview4HandlerAddedAfterRestoreGetsTheStore(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	putPods(t, h.Server, 0, 3)

	// A proxy to the simulated server that, once armed, holds the first
	// confirmation (a one-item NotOlderThan list) until gate is closed.
	target, err := url.Parse(h.URL)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1 // watches stream through at once
	var armed atomic.Bool
	var once sync.Once
	arrived, gate := make(chan struct{}), make(chan struct{})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if armed.Load() && q.Get("limit") == "1" && q.Get("resourceVersionMatch") == watch.MatchNotOlderThan {
			once.Do(func() {
				close(arrived)
				<-gate
			})
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)

	path := filepath.Join(t.TempDir(), "pods.snap")
	first := runAndStop(t, snapshotOptions(t, proxy.URL, path))
	require.EqualValues(t, 1, first.Stats().SnapshotWrites)

	armed.Store(true)
	inf, err := New(snapshotOptions(t, proxy.URL, path))
	require.NoError(t, err)
	early := &recorderT{}
	_, err = inf.AddHandler(early, HandlerOptions{})
	require.NoError(t, err)
	start(t, inf)
	select {
	case <-arrived: // the store is restored; the informer is not synced yet
	case <-time.After(waitLong):
		close(gate)
		t.Fatal("no confirmation request") // a broken run only
	}
	require.False(t, inf.HasSynced())
	require.Equal(t, 3, inf.Store().Len(), "the snapshot is in the store")
	late := &recorderT{}
	reg, err := inf.AddHandler(late, HandlerOptions{})
	require.NoError(t, err)
	close(gate)

	require.True(t, inf.WaitForSync(ctxTimeout(t)))
	require.True(t, inf.Stats().Restored)
	require.Zero(t, inf.Stats().Relists, "the snapshot was confirmed: no list")
	require.Eventually(t, early.count(3), waitLong, tick) // a bound on a broken run only
	require.Eventually(t, reg.HasSynced, waitLong, tick)  // a bound on a broken run only
	require.Len(t, late.get(), 3,
		"the late handler reports synced, so it must have been given the store's 3 objects: %v", late.get())
}
