package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/leader"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/metrics/metricstest"
	"github.com/kwatch/kwatch/shard"
)

// getRoundTrip makes a reconciler that records each reconcile and reads
// its object (a round trip of work).
func (b *bubble) getRoundTrip(id string, c *kube.Client) controller.Reconciler {
	cms := client.For(c, kube.Typed[*Obj](kube.ConfigMaps), client.Options{})
	return func(ctx context.Context, key controller.Key) (controller.Result, error) {
		b.rec.start(id, key.String())
		defer b.rec.end(id, key.String())
		_, err := cms.Get(ctx, key.Namespace, key.Name, client.GetOptions{})
		if kube.IsNotFound(err) {
			err = nil
		}
		return controller.Result{}, err
	}
}

// filterReplica runs a Filter-mode replica in demo whose reconciles read
// their object.
func (b *bubble) filterReplica(id string) *bubbleReplica {
	return b.startWith(id, replicaSpec{mode: shard.Filter, mgr: demoOnly, reconcile: b.getRoundTrip})
}

// churn patches the objects round robin, one every 5 ms, until stopped,
// so reconciles run through every handover.
func churn(t *testing.T, srv *kwatchtest.Server, keys []string) func() {
	return churnEvery(t, srv, keys, 5*time.Millisecond)
}

// churnEvery is churn with one patch every interval.
func churnEvery(t *testing.T, srv *kwatchtest.Server, keys []string, interval time.Duration) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
			k := controller.ParseKey(keys[i%len(keys)])
			_, err := srv.Patch("configmaps", k.Namespace, k.Name, fmt.Sprintf(`{"data":{"n":"%d"}}`, i))
			if err != nil {
				t.Errorf("churn: %v", err)
				return
			}
		}
	}()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// seedConfigMaps creates n ConfigMaps in demo named by nameFormat (with
// extra(i), if set, appended to each object's fields) and returns their
// keys.
func seedConfigMaps(t *testing.T, srv *kwatchtest.Server, n int, nameFormat string, extra func(i int) string) []string {
	t.Helper()
	keys := make([]string, 0, n)
	for i := range n {
		name := fmt.Sprintf(nameFormat, i)
		more := ""
		if extra != nil {
			more = extra(i)
		}
		_, err := srv.Create("configmaps", fmt.Sprintf(`{"metadata":{"namespace":"demo","name":%q}%s}`, name, more))
		require.NoError(t, err)
		keys = append(keys, "demo/"+name)
	}
	return keys
}

// TestShardedManagers: three sharded managers on one server split 1,000
// ConfigMaps; a fourth joins and takes about a quarter; one crashes and
// its keys are owned and reconciled again by the others, not before its
// Lease could have expired. Objects change all along, and no key is ever
// reconciled by two replicas at once. Default ring timings, fake time.
func TestShardedManagers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t)
		keys := b.seedAs(1000, "cm-%04d", nil)
		var rs []*bubbleReplica
		for i := range 3 {
			rs = append(rs, b.filterReplica(fmt.Sprintf("replica-%d", i)))
		}
		b.waitRing(rs, keys)
		require.True(t, within(time.Minute, func() bool { return b.rec.reconciledAfter(rs[0].mgr.Shard().Ring(), keys, 0) }),
			"every key reconciled by its owner")
		stopChurn := b.churn(keys, 20*time.Millisecond)

		// A fourth replica joins: about a quarter of the keys move to it.
		before := rs[0].mgr.Shard().Ring()
		rs = append(rs, b.filterReplica("replica-3"))
		b.waitRing(rs, keys)
		after := rs[0].mgr.Shard().Ring()
		moved := 0
		for _, k := range keys {
			if o := after.Owner(k); o != before.Owner(k) {
				require.Equal(t, "replica-3", o)
				moved++
			}
		}
		require.InDelta(t, 250, moved, 100, "keys moved to the 4th replica")

		// One replica crashes: its keys move once its Lease expires, and
		// not before: its last renew was at most a retry period before
		// the crash, and the others wait a LeaseDuration from when they
		// saw it.
		var theirs []string
		for _, k := range keys {
			if after.Owner(k) == "replica-1" {
				theirs = append(theirs, k)
			}
		}
		rs[1].crash()
		live := []*bubbleReplica{rs[0], rs[2], rs[3]}
		takenEarly := func() bool {
			for _, k := range theirs {
				if live[0].owns(k) || live[1].owns(k) || live[2].owns(k) {
					return true
				}
			}
			return false
		}
		require.False(t, within(leader.DefaultLeaseDuration-leader.DefaultRetryPeriod, takenEarly),
			"a key of the crashed replica was owned by another before its Lease could expire")
		// And soon after (package shard's doc): the others judge it dead
		// within LeaseDuration plus two retry periods of its last renew,
		// and pass the next barrier a round later.
		took := b.waitRing(live, keys) + leader.DefaultLeaseDuration - leader.DefaultRetryPeriod
		require.LessOrEqual(t, took, leader.DefaultLeaseDuration+3*leader.DefaultRetryPeriod,
			"the keys of the crashed replica were owned again only %v after the crash", took)
		stopChurn()

		mark := b.rec.mark()
		b.touch(keys, "touched")
		require.True(t, within(time.Minute, func() bool { return b.rec.reconciledAfter(live[0].mgr.Shard().Ring(), keys, mark) }),
			"every key reconciled by its owner once the ring settled")
		require.Empty(t, b.rec.overlapList())
		t.Logf("%d reconciles, 0 overlaps", b.rec.count())
	})
}

// TestShardedOwnedObjectsFollowTheirOwner: a change of an owned Secret
// enqueues its owner ConfigMap's key on every replica, and only the
// owner's replica on the ring reconciles it.
func TestShardedOwnedObjectsFollowTheirOwner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t)
		var keys, secrets []string
		for i := range 60 {
			k := fmt.Sprintf("demo/cm-%02d", i)
			keys, secrets = append(keys, k), append(secrets, b.ownerOfSecret(k))
		}
		rs := []*bubbleReplica{b.filterReplica("replica-0"), b.filterReplica("replica-1")}
		b.waitRing(rs, keys)
		ring := rs[0].mgr.Shard().Ring()
		require.True(t, within(time.Minute, func() bool { return b.rec.reconciledAfter(ring, keys, 0) }))
		mark := b.rec.mark()
		for i, s := range secrets {
			ns, name, _ := strings.Cut(s, "/")
			_, err := b.srv.Patch("secrets", ns, name, fmt.Appendf(nil, `{"metadata":{"annotations":{"n":"%d"}}}`, i))
			require.NoError(t, err)
		}
		require.True(t, within(time.Minute, func() bool { return b.rec.reconciledAfter(ring, keys, mark) }),
			"every owner reconciled after its Secret changed, by its replica")
		require.Empty(t, b.rec.overlapList())
	})
}

// TestShardMetrics: each replica's kwatch_shard_keys_owned is the number
// of keys it owns, and its ring metrics see both members.
func TestShardMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t)
		keys := b.seedAs(100, "cm-%03d", nil)
		regs := []*metrics.Set{metrics.NewSet(), metrics.NewSet()}
		var rs []*bubbleReplica
		for i, reg := range regs {
			rs = append(rs, b.startWith(fmt.Sprintf("replica-%d", i), replicaSpec{mode: shard.Filter, mgr: demoOnly, metrics: reg}))
		}
		b.waitRing(rs, keys)
		synctest.Wait()
		total := 0.0
		for i, reg := range regs {
			m := metricstest.Scrape(t, reg)
			owned := m[`kwatch_shard_keys_owned{name="cms"}`]
			want := 0
			for _, k := range keys {
				if rs[i].owns(k) {
					want++
				}
			}
			require.Equal(t, float64(want), owned, "replica-%d", i)
			require.Equal(t, 2.0, m[`kwatch_shard_ring_members{ring="demo/cms"}`])
			require.GreaterOrEqual(t, m[`kwatch_shard_handovers_total{ring="demo/cms"}`], 1.0)
			total += owned
		}
		require.Equal(t, float64(len(keys)), total)
	})
}
