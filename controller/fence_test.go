package controller_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
)

// touch patches the ConfigMap's annotation "by" to the replica, through
// cms (the manager's fenced client).
func touch(ctx context.Context, cms *client.Client[*Obj], key controller.Key, by string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"by":%q}}}`, by)
	_, err := cms.Patch(ctx, key.Namespace, key.Name, client.MergePatch, []byte(patch), client.PatchOptions{})
	return err
}

func (c *fenceCluster) seed(names ...string) {
	for _, n := range names {
		_, err := c.srv.Create("configmaps", fmt.Appendf(nil, `{"metadata":{"namespace":"demo","name":%q},"data":{"v":"0"}}`, n))
		require.NoError(c.t, err)
	}
}

// TestLostLeaseFencesReconcilesAndWrites is issue 23's scenario with
// the default timings (15 s / 10 s / 2 s, ShutdownTimeout 30 s): the
// leader a is reconciling a key, with a reconcile that ignores its
// context, when its Lease writes start failing. At its renew deadline
// the reconcile's context is cancelled (not 30 s later, at the drain
// timeout); b takes over LeaseDuration - RenewDeadline later at the
// earliest and reconciles the key; when a's reconcile then writes, with
// its key or without, both writes are refused with kube.IsFenced, and
// the server (its own record) never received them.
func TestLostLeaseFencesReconcilesAndWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFenceCluster(t)
		c.seed("cm")
		proceed := make(chan struct{})
		started := make(chan struct{})
		var once sync.Once
		var cancelledAt time.Time
		var keyed, keyless error
		a := c.start(replica{name: "a", reconcile: func(cms *client.Client[*Obj]) controller.Reconciler {
			return func(ctx context.Context, key controller.Key) (controller.Result, error) {
				first := false
				once.Do(func() { first = true })
				if !first {
					return controller.Result{}, nil
				}
				require.NoError(t, touch(ctx, cms, key, "a"))
				close(started)
				<-proceed // ignores ctx
				if ctx.Err() != nil {
					cancelledAt = time.Now() // bounded below by the recorder's own
				}
				keyed = touch(context.WithoutCancel(ctx), cms, key, "a-late")
				keyless = touch(context.Background(), cms, key, "a-late")
				return controller.Result{}, nil
			}
		}})
		<-started
		var bStarted time.Time
		var bMu sync.Mutex
		c.start(replica{name: "b", reconcile: func(cms *client.Client[*Obj]) controller.Reconciler {
			return func(ctx context.Context, key controller.Key) (controller.Result, error) {
				bMu.Lock()
				if bStarted.IsZero() {
					bStarted = time.Now()
				}
				bMu.Unlock()
				return controller.Result{}, touch(ctx, cms, key, "b")
			}
		}})
		var release sync.Once
		t.Cleanup(func() { release.Do(func() { close(proceed) }) }) // runs before the replicas' stops
		time.Sleep(5 * time.Second)
		failed := time.Now()
		a.link.setFailLeases(true)
		bFirst := func() time.Time {
			bMu.Lock()
			defer bMu.Unlock()
			return bStarted
		}
		for bFirst().IsZero() {
			require.Less(t, time.Since(failed), 2*time.Minute, "b never took over")
			time.Sleep(100 * time.Millisecond)
		}
		ov := c.h.overlaps()
		require.Empty(t, ov, "b reconciled the key while a's reconcile was in flight with a live context")
		spans := c.h.reconciles["demo/cm"]
		require.Equal(t, "a", spans[0].replica)
		aEnd := spans[0].end
		require.False(t, aEnd.IsZero())
		require.LessOrEqual(t, aEnd.Sub(failed), leader.DefaultRenewDeadline,
			"a's reconcile context is cancelled within the renew deadline of its last renew")
		require.GreaterOrEqual(t, bFirst().Sub(aEnd), leader.DefaultLeaseDuration-leader.DefaultRenewDeadline,
			"the margin between a's stop and b's start")

		release.Do(func() { close(proceed) })
		require.ErrorIs(t, a.stop(), leader.ErrLost)
		require.False(t, cancelledAt.IsZero(), "a's reconcile context was cancelled")
		require.True(t, kube.IsFenced(keyed), "a's late write with its key: %v", keyed)
		require.True(t, kube.IsFenced(keyless), "a's late write without a key: %v", keyless)
		require.True(t, errors.Is(keyed, kube.ErrFenced))
		synctest.Wait()
		for _, w := range c.h.writes {
			if w.replica == "a" {
				require.True(t, w.at.Before(failed), "a write of a reached the server at %v, after its Lease writes failed at %v", w.at, failed)
			}
		}
		require.Empty(t, c.h.staleWrites(true))
	})
}
