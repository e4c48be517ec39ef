package informer

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// TestReview5RerunWithSnapshotAddsEveryObjectAgain (fifth reader; it
// failed on da82603, before a Run restored a snapshot only into an empty
// store): Run may be called again once it has
// returned (running is reset, runCtx cleared; resume.go: "A new Run tries
// again"). AddHandler promises a handler "every object in the store once
// as an add, then live changes, with neither a gap nor an overlap". With
// a snapshot, the second Run's snap.restore -> restoreCommitLocked queued
// every restored object with addAll(keys, objs, true) to every handler,
// although each of them was already given those objects: the handler
// registered before the first Run got them from the first list, and the
// one added between the two Runs got them from AddHandler's replay (filled
// is still true). Both got OnAdd(obj, inInitialList=true) a second time
// for every object. (Had the file been older than the store, keys in the
// store but not in the file would also be replaced without a delete.)
//
// Interleaving: Run#1 (list, sync, handler `early` given 3 adds) -> Run#1
// returns (final snapshot write, same 3 objects) -> AddHandler(`between`)
// (filled: 3 adds queued) -> Run#2 -> snap.restore -> restoreCommitLocked
// (addAll of the 3 restored objects to both handlers) -> confirm -> watch.
func TestReview5RerunWithSnapshotAddsEveryObjectAgain(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	putPods(t, h.Server, 0, 3)
	path := filepath.Join(t.TempDir(), "pods.snap")
	inf, err := New(snapshotOptions(t, h.URL, path))
	require.NoError(t, err)
	early := &recorderT{}
	_, err = inf.AddHandler(early, HandlerOptions{Delivery: Ordered})
	require.NoError(t, err)

	// Run #1: list, sync, deliver, stop (the final write).
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	require.True(t, inf.WaitForSync(ctxTimeout(t)))
	require.Eventually(t, early.count(3), waitLong, tick) // a bound on a broken run only
	cancel()
	require.NoError(t, <-done)
	require.EqualValues(t, 1, inf.Stats().SnapshotWrites, "written when Run returned")
	require.False(t, inf.Stats().Restored, "the first Run had no file")

	between := &recorderT{}
	_, err = inf.AddHandler(between, HandlerOptions{Delivery: Ordered})
	require.NoError(t, err)

	// Run #2 on the same informer: its store, filled by Run #1, is
	// relisted and compared, not restored over from the file.
	start(t, inf)
	require.Eventually(t, func() bool { return inf.Stats().Relists >= 2 }, waitLong, tick) // broken run only
	require.False(t, inf.Stats().Restored, "a filled store is not restored over")
	// A marker after the relist: an Ordered handler gets it after every
	// change queued before it.
	_, err = h.Server.PutPod(sim.Pod{Namespace: "ns", Name: "marker"})
	require.NoError(t, err)
	hasMarker := func(r *recorderT) func() bool {
		return func() bool {
			for _, c := range r.get() {
				if len(c) > len("add ns/marker") && c[:len("add ns/marker")] == "add ns/marker" {
					return true
				}
			}
			return false
		}
	}
	require.Eventually(t, hasMarker(early), waitLong, tick)   // broken run only
	require.Eventually(t, hasMarker(between), waitLong, tick) // broken run only

	assert.Len(t, early.get(), 4,
		"early was given the 3 objects by the first list; the second Run must add only the marker: %v", early.get())
	assert.Len(t, between.get(), 4,
		"between was given the 3 objects by AddHandler; the second Run must add only the marker: %v", between.get())
}
