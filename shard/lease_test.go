package shard

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/leader"
)

const leases = "leases.coordination.k8s.io"

// TestReleasedUnderItFences: a running member's Lease is released by
// someone else (a hand edit, or a twin process with the same identity
// stopping). The others count the member out at once, so it must not
// take its Lease back: it fences at its next round, before the others
// own its keys, and Run returns ErrFenced. Default timings.
func TestReleasedUnderItFences(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		keys := testKeys(300)
		a, b, cc := c.run("a", nil), c.run("b", nil), c.run("c", nil)
		all := func() []*testMember { return []*testMember{a, b, cc} }
		waitSettled(t, all, 3)
		mine := ""
		for _, k := range keys {
			if a.m.Owns(k) {
				mine = k
				break
			}
		}
		require.NotEmpty(t, mine)
		w, stopWatch := c.watchOverlap(all, keys, 50*time.Millisecond)
		defer stopWatch()

		edit := time.Now()
		_, err := c.srv.Patch(leases, testNS, LeaseName("r", "a"), []byte(`{"spec":{"holderIdentity":""}}`))
		require.NoError(t, err)
		var fenced, taken time.Duration
		for fenced == 0 || taken == 0 {
			time.Sleep(50 * time.Millisecond)
			if fenced == 0 && a.m.Status().Fenced {
				fenced = time.Since(edit)
			}
			if taken == 0 && (b.m.Owns(mine) || cc.m.Owns(mine)) {
				taken = time.Since(edit)
			}
			require.Less(t, time.Since(edit), time.Minute, "a fenced after %v, its key taken after %v", fenced, taken)
		}
		require.LessOrEqual(t, fenced, leader.DefaultRetryPeriod+time.Second, "a fences at its next round")
		require.Greater(t, taken, fenced)
		require.ErrorIs(t, a.stop(), ErrFenced)
		stopWatch()
		require.Empty(t, w.overlaps)
		waitSettled(t, func() []*testMember { return []*testMember{b, cc} }, 2)
		checkOwnedOnce(t, []*testMember{b, cc}, keys)
	})
}

// TestRestartTakesItsReleasedLeaseBack: a process that starts with the
// identity of one that stopped cleanly (its Lease released) takes that
// Lease over: a released Lease fences only a member that held it.
func TestRestartTakesItsReleasedLeaseBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		a := c.run("a", nil)
		waitSettled(t, func() []*testMember { return []*testMember{a} }, 1)
		require.NoError(t, a.stop())
		again := c.run("a", nil)
		waitSettled(t, func() []*testMember { return []*testMember{again} }, 1)
		require.True(t, again.m.Owns("demo/x"))
		require.NoError(t, again.stop())
	})
}

// TestReleasedLeaseIsCollectedAfterTwoLeaseDurations: a released Lease
// stays for two lease durations after the others saw it change, so that
// every member reads the release (a Lease that vanishes before a member
// saw it released counts as live for a lease duration), and is deleted
// then, as the package doc says.
func TestReleasedLeaseIsCollectedAfterTwoLeaseDurations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		a, b := c.run("a", nil), c.run("b", nil)
		waitSettled(t, func() []*testMember { return []*testMember{a, b} }, 2)
		require.NoError(t, b.stop())
		released := time.Now()
		time.Sleep(2*leader.DefaultLeaseDuration - time.Millisecond) // a saw it change at the release or after
		synctest.Wait()
		_, err := c.srv.Get(leases, testNS, LeaseName("r", "b"))
		require.NoError(t, err, "kept %v after the release", time.Since(released))
		time.Sleep(3 * leader.DefaultRetryPeriod) // a saw it within a round, deletes it within a round
		synctest.Wait()
		_, err = c.srv.Get(leases, testNS, LeaseName("r", "b"))
		require.Error(t, err, "deleted %v after the release", time.Since(released))
	})
}
