package controller_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
)

// TestLeaderElectionGatesControllers: two managers on one Lease; only the
// leader's controller reconciles. When the leader's Run is cancelled its
// reconciles end before it releases the Lease, and the other takes over.
func TestLeaderElectionGatesControllers(t *testing.T) {
	h, c := start(t)
	_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"cm"}}`))
	require.NoError(t, err)
	var mu sync.Mutex
	var order []string // "a", "b": whose reconcile ran, in order
	newManager := func(id string) *controller.Manager {
		m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet(),
			LeaderElection: &leader.Config{Namespace: "demo", Name: "managers", Identity: id,
				LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond}})
		require.NoError(t, err)
		_, err = controller.New(m, controller.Config[*Obj]{Name: "cms", For: kube.ConfigMaps,
			Reconcile: func(context.Context, controller.Key) (controller.Result, error) {
				mu.Lock()
				order = append(order, id)
				mu.Unlock()
				return controller.Result{}, nil
			}})
		require.NoError(t, err)
		return m
	}
	count := func(id string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, o := range order {
			if o == id {
				n++
			}
		}
		return n
	}
	leases := client.For[*leader.Lease](c, kube.Leases, client.Options{})
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
	require.Eventually(t, func() bool { return count("a") == 1 }, waitLong, tick)
	require.Equal(t, "a", holder())

	b := newManager("b")
	run(t, b)
	require.Eventually(t, func() bool { return b.Synced() }, waitLong, tick)
	_, err = h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"cm2"}}`))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return count("a") == 2 }, waitLong, tick)
	require.Zero(t, count("b"), "b does not lead, so its controller does not run")

	cancelA()
	require.NoError(t, <-doneA)
	require.NotEqual(t, "a", holder(), "a released the lease (after its controllers stopped: Run returned)")
	require.Eventually(t, func() bool { return count("b") == 2 }, waitLong, tick)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"a", "a", "b", "b"}, order)
}
