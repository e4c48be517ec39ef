package controller_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
)

// reconciledBy reports whether replica has started reconciling every
// key of keys.
func (h *history) reconciledBy(replica string, keys ...string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range keys {
		found := false
		for _, s := range h.reconciles[k] {
			found = found || s.replica == replica
		}
		if !found {
			return false
		}
	}
	return true
}

// A sharded replica that leaves cleanly releases its Lease (holder ""):
// the others count it out at once and take its keys after one barrier,
// well before its renew deadline. From the release on it may not act:
// a write through its manager's client, with a key or without (a
// goroutine that outlived its reconcile, a shutdown hook), is refused,
// as under leader election, where the term ends before the release.
// Before the fix the member's term outlived the release until its
// deadline, so a write without a key went through after b had taken
// the key over.
func TestShardReleaseEndsTheTermBeforeOthersTakeOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFenceCluster(t)
		keys := []string{"demo/cm-0", "demo/cm-1", "demo/cm-2", "demo/cm-3"}
		c.seed("cm-0", "cm-1", "cm-2", "cm-3")
		a := c.start(replica{name: "a", sharded: true})
		for !c.h.reconciledBy("a", keys...) {
			time.Sleep(100 * time.Millisecond)
		}
		c.start(replica{name: "b", sharded: true})
		time.Sleep(10 * time.Second) // the ring {a, b} settles
		require.True(t, a.mgr.Shard().Term().LastCut().IsZero(),
			"a's answered writes and finished reconciles are no cuts: its release need not wait")
		require.NoError(t, a.stop(), "a clean stop")
		stopped := time.Now()
		for !c.h.reconciledBy("b", keys...) {
			require.Less(t, time.Since(stopped), time.Minute, "b never took a's keys over")
			time.Sleep(100 * time.Millisecond)
		}
		require.Less(t, time.Since(stopped), 10*time.Second,
			"b took the keys over before a's renew deadline (else the test tests nothing)")
		key := controller.Key{Namespace: "demo", Name: "cm-0"}
		err := touch(context.Background(), a.cms, key, "a-after-release")
		require.True(t, kube.IsFenced(err), "a's write after its release, while b owns the key: %v", err)
		synctest.Wait()
		require.Empty(t, c.h.staleWrites(false))
		require.Empty(t, c.h.overlaps())
	})
}
