package controller_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/internal/rig/memcluster"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
)

// TestLeaderElectionGatesControllers: two managers on one Lease; only the
// leader's controller reconciles. When the leader's Run is cancelled its
// reconciles end before it releases the Lease, and the other takes over
// within a retry period. Default election timings, fake time.
func TestLeaderElectionGatesControllers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cl := memcluster.New(t)
		require.NoError(t, cl.Server.EnsureNamespace("demo"))
		_, err := cl.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"cm"}}`))
		require.NoError(t, err)
		var mu sync.Mutex
		var order []string // "a", "b": whose reconcile ran, in order
		var bFirst time.Time
		newManager := func(id string) *controller.Manager {
			c, _ := cl.Connect(id)
			m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet(),
				LeaderElection: &leader.Config{Namespace: "demo", Name: "managers", Identity: id}})
			require.NoError(t, err)
			_, err = controller.New(m, controller.Config[*Obj]{Name: "cms", For: kube.Typed[*Obj](kube.ConfigMaps),
				Reconcile: func(context.Context, controller.Key) (controller.Result, error) {
					mu.Lock()
					defer mu.Unlock()
					if id == "b" && bFirst.IsZero() {
						bFirst = time.Now()
					}
					order = append(order, id)
					return controller.Result{}, nil
				}})
			require.NoError(t, err)
			return m
		}
		runs := func() []string {
			mu.Lock()
			defer mu.Unlock()
			return append([]string(nil), order...)
		}
		reader, _ := cl.Connect("reader")
		leases := client.For(reader, kube.Typed[*leader.Lease](kube.Leases), client.Options{})
		holder := func() string {
			l, err := leases.Get(context.Background(), "demo", "managers", client.GetOptions{})
			if err != nil || l.Spec.HolderIdentity == nil {
				return ""
			}
			return *l.Spec.HolderIdentity
		}

		a := newManager("a")
		ctxA, cancelA := context.WithCancel(context.Background())
		doneA := make(chan error, 1)
		go func() { doneA <- a.Run(ctxA) }()
		synctest.Wait()
		require.Equal(t, []string{"a"}, runs(), "a leads at once and reconciles cm")
		require.Equal(t, "a", holder())

		b := newManager("b")
		run(t, b)
		synctest.Wait()
		require.True(t, b.Synced())
		_, err = cl.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"cm2"}}`))
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, []string{"a", "a"}, runs(), "b does not lead, so its controller does not run")
		time.Sleep(time.Minute) // a renews all along; b waits
		require.Equal(t, []string{"a", "a"}, runs())

		cancelA()
		require.NoError(t, <-doneA)
		released := time.Now()
		require.NotEqual(t, "a", holder(), "a released the lease (after its controllers stopped: Run returned)")
		time.Sleep(leader.DefaultRetryPeriod)
		synctest.Wait()
		require.Equal(t, []string{"a", "a", "b", "b"}, runs(), "b leads within a retry period of the release")
		require.LessOrEqual(t, bFirst.Sub(released), leader.DefaultRetryPeriod)
	})
}
