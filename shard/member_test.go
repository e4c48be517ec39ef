package shard

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/leader"
)

// settled reports whether every member sees the same members and has
// passed the barrier of their ring.
func settled(ms []*testMember, n int) bool {
	var v string
	for _, tm := range ms {
		st := tm.m.Status()
		if len(st.Members) != n || st.Settled != st.Target || (v != "" && st.Target != v) {
			return false
		}
		v = st.Target
	}
	return true
}

// TestMemberAlone: one member owns every key after its first round, and
// releases its Lease when stopped.
func TestMemberAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		a := c.run("a", nil)
		time.Sleep(3 * time.Second) // two rounds: publish, then the barrier
		synctest.Wait()
		require.True(t, a.m.Owns("demo/x"))
		st := a.m.Status()
		require.Equal(t, []string{"a"}, st.Members)
		require.Equal(t, st.Target, st.Settled)
		require.NoError(t, a.stop())
		require.False(t, a.m.Owns("demo/x"), "stopped")
		obj, err := c.srv.Get("leases.coordination.k8s.io", testNS, LeaseName("r", "a"))
		require.NoError(t, err)
		require.Contains(t, string(obj.JSON), `"holderIdentity":""`)
	})
}

// TestMembersSplitWithoutOverlap: three members starting together, then
// a fourth joining, then one stopped cleanly: at no step of fake time is
// a key owned by two members; each settled ring gives every key exactly
// one owner, the ring's.
func TestMembersSplitWithoutOverlap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		keys := testKeys(300)
		var mu sync.Mutex
		var ms []*testMember
		members := func() []*testMember { mu.Lock(); defer mu.Unlock(); return append([]*testMember(nil), ms...) }
		add := func(id string) {
			tm := c.run(id, nil)
			mu.Lock()
			ms = append(ms, tm)
			mu.Unlock()
		}
		w, stopWatch := c.watchOverlap(members, keys, 100*time.Millisecond)
		for _, id := range []string{"a", "b", "c"} {
			add(id)
		}
		waitSettled(t, members, 3)
		checkOwnedOnce(t, members(), keys)

		add("d")
		waitSettled(t, members, 4)
		checkOwnedOnce(t, members(), keys)

		require.NoError(t, members()[0].stop())
		mu.Lock()
		ms = ms[1:]
		mu.Unlock()
		waitSettled(t, members, 3)
		checkOwnedOnce(t, members(), keys)
		stopWatch()
		require.Empty(t, w.overlaps)
	})
}

func waitSettled(t *testing.T, members func() []*testMember, n int) time.Duration {
	t.Helper()
	start := time.Now()
	for !settled(members(), n) {
		require.Less(t, time.Since(start), 2*time.Minute, "ring of %d did not settle", n)
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

func checkOwnedOnce(t *testing.T, ms []*testMember, keys []string) {
	t.Helper()
	ring := ms[0].m.Ring()
	got := owners(ms, keys)
	for _, k := range keys {
		require.Equal(t, []string{ring.Owner(k)}, got[k], "key %s", k)
	}
}

// TestPartitionedMemberFencesBeforeOthersTakeOver: a member cut off from
// the server stops reconciling at its renew deadline, before the others
// judge it dead (a lease duration after they last saw its Lease change)
// and take its keys.
func TestPartitionedMemberFencesBeforeOthersTakeOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		keys := testKeys(300)
		a, b, cc := c.run("a", nil), c.run("b", nil), c.run("c", nil)
		all := func() []*testMember { return []*testMember{a, b, cc} }
		waitSettled(t, all, 3)
		var mine string
		for _, k := range keys {
			if a.m.Owns(k) {
				mine = k
				break
			}
		}
		require.NotEmpty(t, mine)
		w, stopWatch := c.watchOverlap(all, keys, 50*time.Millisecond)

		cut := time.Now()
		a.link.Partition(false)
		var fenced, taken time.Duration
		for fenced == 0 || taken == 0 {
			time.Sleep(50 * time.Millisecond)
			if fenced == 0 && !a.m.Owns(mine) {
				fenced = time.Since(cut)
			}
			if taken == 0 && (b.m.Owns(mine) || cc.m.Owns(mine)) {
				taken = time.Since(cut)
			}
			require.Less(t, time.Since(cut), time.Minute)
		}
		require.LessOrEqual(t, fenced, leader.DefaultRenewDeadline, "a fences within its renew deadline of its last renew")
		require.Greater(t, taken, fenced+leader.DefaultLeaseDuration-leader.DefaultRenewDeadline-leader.DefaultRetryPeriod,
			"the others wait a lease duration from the last change they saw")
		require.LessOrEqual(t, taken, leader.DefaultLeaseDuration+3*leader.DefaultRetryPeriod)
		require.True(t, errors.Is(a.stop(), ErrFenced))
		stopWatch()
		require.Empty(t, w.overlaps)
		waitSettled(t, func() []*testMember { return []*testMember{b, cc} }, 2)
		checkOwnedOnce(t, []*testMember{b, cc}, keys)
	})
}

// TestInFlightReconcileHoldsHandover: a key in flight on its old owner is
// not started by the new one until the old owner's reconcile is done.
func TestInFlightReconcileHoldsHandover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		a := c.run("a", nil)
		time.Sleep(3 * time.Second) // two rounds: publish, then the barrier
		synctest.Wait()
		ab := NewRing([]string{"a", "b"}, 0)
		k := keyOwnedBy(t, ab, "b")
		_, done, ok := a.m.Begin(context.Background(), k)
		require.True(t, ok)
		b := c.run("b", nil)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.False(t, a.m.Owns(k), "a stopped starting it once b joined")
		require.False(t, b.m.Owns(k), "b waits for a's reconcile")
		require.NotEqual(t, ab.Version(), a.m.Status().Published, "a has not published the new ring")
		done()
		waitSettled(t, func() []*testMember { return []*testMember{a, b} }, 2)
		require.True(t, b.m.Owns(k))
		_, _, ok = a.m.Begin(context.Background(), k)
		require.False(t, ok)
	})
}

// TestFenceCancelsInFlight: a fenced member cancels the contexts it gave
// to reconciles in flight, and Run returns ErrFenced.
func TestFenceCancelsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		a := c.run("a", nil)
		time.Sleep(3 * time.Second) // two rounds: publish, then the barrier
		synctest.Wait()
		ctx, done, ok := a.m.Begin(context.Background(), "demo/x")
		require.True(t, ok)
		cut := time.Now()
		a.link.Partition(false)
		<-ctx.Done()
		require.LessOrEqual(t, time.Since(cut), leader.DefaultRenewDeadline)
		done()
		require.ErrorIs(t, a.stop(), ErrFenced)
		require.True(t, a.m.Status().Fenced)
	})
}

// TestLostWriteResponses: the server applies a member's Lease writes
// but the answers are lost, while a member joins: the member treats each
// as possibly published, passes no barrier until a write is confirmed,
// and no key is ever owned twice.
func TestLostWriteResponses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		keys := testKeys(300)
		var mu sync.Mutex
		all := []*testMember{c.run("a", nil), c.run("b", nil)}
		members := func() []*testMember { mu.Lock(); defer mu.Unlock(); return append([]*testMember(nil), all...) }
		waitSettled(t, members, 2)
		w, stopWatch := c.watchOverlap(members, keys, 50*time.Millisecond)
		a := all[0]
		a.link.lose.Store(3)
		cc := c.run("c", nil)
		mu.Lock()
		all = append(all, cc)
		mu.Unlock()
		waitSettled(t, members, 3)
		require.LessOrEqual(t, a.link.lose.Load(), int32(0), "every lost write happened")
		checkOwnedOnce(t, members(), keys)
		stopWatch()
		require.Empty(t, w.overlaps)
	})
}

// TestTwoChangesAtOnce: one member is cut off and another joins at the
// same instant, so the ring changes twice before the first handover is
// done: no key is owned twice at any step, and the ring settles on the
// survivors and the newcomer.
func TestTwoChangesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		keys := testKeys(300)
		var mu sync.Mutex
		all := []*testMember{c.run("a", nil), c.run("b", nil), c.run("c", nil)}
		members := func() []*testMember { mu.Lock(); defer mu.Unlock(); return append([]*testMember(nil), all...) }
		waitSettled(t, members, 3)
		w, stopWatch := c.watchOverlap(members, keys, 50*time.Millisecond)
		cut := all[2]
		cut.link.Partition(false)
		d := c.run("d", nil)
		mu.Lock()
		all = append(all, d)
		mu.Unlock()
		time.Sleep(time.Minute) // c has fenced and been judged dead
		require.ErrorIs(t, cut.stop(), ErrFenced)
		mu.Lock()
		all = []*testMember{all[0], all[1], d}
		mu.Unlock()
		waitSettled(t, members, 3)
		checkOwnedOnce(t, members(), keys)
		stopWatch()
		require.Empty(t, w.overlaps)
	})
}
