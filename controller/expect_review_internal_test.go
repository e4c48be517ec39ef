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
		require.Error(t, e.waitShown(ctx, c, "demo/x"), "the cache has not shown version 20")
	})
}
