package controller_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/shard"
)

// TestGainedKeysWaitBehindChanges: the keys a replica gains at a
// handover are a backlog that confirms what it takes over, as an initial
// list is: they wait at low priority, and a change of a key the replica
// owned all along is reconciled next, not after the backlog. x and y
// share 40 ConfigMaps, one worker each, a reconcile taking 100 ms; y
// leaves, and x's one worker is busy with y's keys when one of x's own
// keys changes.
func TestGainedKeysWaitBehindChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t)
		keys := b.seedAs(40, "cm-%02d", nil)
		slow := func(id string, _ *kube.Client) controller.Reconciler {
			return func(ctx context.Context, key controller.Key) (controller.Result, error) {
				b.rec.start(id, key.String())
				defer b.rec.end(id, key.String())
				time.Sleep(100 * time.Millisecond)
				return controller.Result{}, nil
			}
		}
		spec := replicaSpec{mode: shard.Filter, mgr: demoOnly, workers: 1, reconcile: slow}
		x, y := b.startWith("x", spec), b.startWith("y", spec)
		b.waitRing([]*bubbleReplica{x, y}, keys)
		require.True(t, within(time.Minute, func() bool { return b.rec.reconciledAfter(x.mgr.Shard().Ring(), keys, 0) }))
		synctest.Wait()
		var own, gained []string
		for _, k := range keys {
			if x.owns(k) {
				own = append(own, k)
			} else {
				gained = append(gained, k)
			}
		}
		require.Greater(t, len(gained), 5, "y owned a backlog's worth of keys")

		left := b.rec.mark()
		require.NoError(t, y.stop())
		b.waitRing([]*bubbleReplica{x}, keys)
		synctest.Wait() // the scan has queued the gained keys; one is in reconcile
		pending := 0
		for _, k := range gained {
			if last, _ := b.rec.lastOf(k); last.seq <= left {
				pending++
			}
		}
		require.Greater(t, pending, 1, "the backlog is still queued")

		changed := b.rec.mark()
		ns, name := controller.ParseKey(own[0]).Namespace, controller.ParseKey(own[0]).Name
		_, err := b.srv.Patch("configmaps", ns, name, []byte(`{"data":{"changed":"1"}}`))
		require.NoError(t, err)
		ring := x.mgr.Shard().Ring()
		require.True(t, within(time.Minute, func() bool {
			return b.rec.reconciledAfter(ring, gained, left) && b.rec.reconciledAfter(ring, own[:1], changed)
		}), "x reconciles what it gained and the change")
		last, _ := b.rec.lastOf(own[0])
		require.Equal(t, changed+1, last.seq, "the change is the next reconcile after the one in flight, of %d gained keys pending", pending)
	})
}
