package controller

import (
	"context"
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

// TestReviewParkedKeyShownWithoutItsEvent: a parked key whose write a
// cache comes to show without an event of the object (its resourceVersion
// passed the write's through a bookmark or other objects' events: no
// observed call for the object settles the key) is queued again when the
// bound's timer finds it shown. It was forgotten there, and never queued
// again.
func TestReviewParkedKeyShownWithoutItsEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var storeRV atomic.Uint64
		storeRV.Store(5)
		c := &cacheEntry{res: resKeyOf(kube.ConfigMaps), scope: kube.Scope{Namespace: "demo"},
			storeRV: func() string { return strconv.FormatUint(storeRV.Load(), 10) },
			state:   func(string, bool) objState { return objState{} }}
		e := newExpectations(DefaultExpectationTimeout, slog.New(slog.NewTextHandler(io.Discard, nil)), nil,
			func(kube.Written) []*cacheEntry { return []*cacheEntry{c} })
		kr := keyRef{"ctl", Key{Namespace: "demo", Name: "set"}}
		ctx := context.WithValue(context.Background(), reconcileKey{}, kr)
		e.record(ctx, kube.Written{Resource: kube.ConfigMaps, Namespace: "demo", Name: "x", ResourceVersion: "10"})
		var added atomic.Int64
		require.True(t, e.park(kr, func(Key) { added.Add(1) }), "the key waits for its write")
		time.Sleep(time.Second)
		storeRV.Store(12) // a bookmark: no event of x
		time.Sleep(DefaultExpectationTimeout)
		synctest.Wait()
		require.EqualValues(t, 1, added.Load(), "the parked key is queued again")
	})
}

// TestReviewParkedKeyShownByARelist: a parked key whose write a cache
// shows without an event of the object (a relist past the object's
// create and delete, say) is queued again within shownRecheck, not at
// the bound; and no re-check stays due once nothing is parked.
func TestReviewParkedKeyShownByARelist(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var storeRV atomic.Uint64
		storeRV.Store(5)
		c := &cacheEntry{res: resKeyOf(kube.ConfigMaps), scope: kube.Scope{Namespace: "demo"},
			storeRV: func() string { return strconv.FormatUint(storeRV.Load(), 10) },
			state:   func(string, bool) objState { return objState{} }}
		e := newExpectations(DefaultExpectationTimeout, slog.New(slog.NewTextHandler(io.Discard, nil)), nil,
			func(kube.Written) []*cacheEntry { return []*cacheEntry{c} })
		kr := keyRef{"ctl", Key{Namespace: "demo", Name: "set"}}
		ctx := context.WithValue(context.Background(), reconcileKey{}, kr)
		e.record(ctx, kube.Written{Resource: kube.ConfigMaps, Namespace: "demo", Name: "x", ResourceVersion: "10"})
		var added atomic.Int64
		require.True(t, e.park(kr, func(Key) { added.Add(1) }), "the key waits for its write")
		time.Sleep(5 * time.Second)
		synctest.Wait()
		require.Zero(t, added.Load(), "the cache does not show the write yet")
		storeRV.Store(12) // a relist at 12: no event of x
		time.Sleep(shownRecheck)
		synctest.Wait()
		require.EqualValues(t, 1, added.Load(), "a re-check queued the key again")
		e.mu.Lock()
		due := e.recheck != nil
		e.mu.Unlock()
		require.False(t, due, "nothing is parked: no re-check is due")
		time.Sleep(DefaultExpectationTimeout)
		synctest.Wait()
		require.EqualValues(t, 1, added.Load(), "queued once")
	})
}

// TestReviewOlderWriteRecordedLast: two writes of one object by this
// process whose records run out of order (two workers: the one answered
// first records last). A Get waits for the later version, not for the one
// recorded last.
func TestReviewOlderWriteRecordedLast(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var storeRV atomic.Uint64
		storeRV.Store(5)
		c := &cacheEntry{res: resKeyOf(kube.ConfigMaps), scope: kube.Scope{Namespace: "demo"},
			storeRV: func() string { return strconv.FormatUint(storeRV.Load(), 10) },
			state:   func(string, bool) objState { return objState{} }}
		e := newExpectations(DefaultExpectationTimeout, slog.New(slog.NewTextHandler(io.Discard, nil)), nil,
			func(kube.Written) []*cacheEntry { return []*cacheEntry{c} })
		w := kube.Written{Resource: kube.ConfigMaps, Namespace: "demo", Name: "x", ResourceVersion: "20"}
		e.record(context.Background(), w)
		w.ResourceVersion = "10"
		e.record(context.Background(), w)
		storeRV.Store(10)
		e.observed(c.res, "demo/x")
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		require.Error(t, e.waitShownErr(ctx, c, "demo/x"), "the cache has not shown version 20")
	})
}
