package sim_test

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

func runChurn(t *testing.T, opts sim.ChurnOptions) (*sim.Server, *sim.Churn) {
	t.Helper()
	srv, err := sim.New(sim.Options{Seed: 7})
	require.NoError(t, err)
	c, err := sim.NewChurn(srv, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, c.Run(ctx))
	return srv, c
}

func podNames(t *testing.T, srv *sim.Server) []string {
	t.Helper()
	_, snap, err := srv.Snapshot("pods")
	require.NoError(t, err)
	var names []string
	for k := range snap {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func TestChurnIsDeterministic(t *testing.T) {
	opts := sim.ChurnOptions{Pods: 200, Namespaces: 4, Events: 500, Seed: 42}
	a, ca := runChurn(t, opts)
	b, _ := runChurn(t, opts)
	require.EqualValues(t, 500, ca.Events())
	require.Equal(t, podNames(t, a), podNames(t, b), "same seed, same pods")
	require.Equal(t, a.ResourceVersion(), b.ResourceVersion(), "same seed, same number of writes")
	opts.Seed = 43
	c, _ := runChurn(t, opts)
	require.NotEqual(t, podNames(t, a), podNames(t, c))
	names := podNames(t, a)
	require.InDelta(t, 200, len(names), 100, "the default mix keeps the pod count near its start")
	for _, n := range names {
		require.True(t, strings.HasPrefix(n, "ns-00"), "pods live in ns-000..ns-003: %s", n)
	}
}

func TestChurnRateAndStop(t *testing.T) {
	srv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	c, err := sim.NewChurn(srv, sim.ChurnOptions{Rate: 200})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	require.Eventually(t, func() bool { return c.Events() >= 5 }, wait, pollEvery)
	cancel()
	require.NoError(t, <-done, "Run returns nil when its context ends")
	_, err = sim.NewChurn(srv, sim.ChurnOptions{Rate: -1})
	require.ErrorContains(t, err, "Rate")
}

func TestChurnedPodsWatchConsistently(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	c, err := sim.NewChurn(h.Server, sim.ChurnOptions{Pods: 50, Namespaces: 2, Events: 300, Seed: 3})
	require.NoError(t, err)
	w := startWatch(t, h, "/api/v1/pods?watch=1&resourceVersion=0")
	require.NoError(t, c.Run(context.Background()))
	final := h.Server.ResourceVersion()
	// Apply the watch to a map; it must converge to the server's snapshot.
	state := map[string]string{}
	for {
		ev := w.next(t)
		md := ev.Object["metadata"].(map[string]any)
		key := md["namespace"].(string) + "/" + md["name"].(string)
		if ev.Type == "DELETED" {
			delete(state, key)
		} else {
			state[key] = ev.rv()
		}
		if ev.rv() == strconvU(final) {
			break
		}
	}
	_, snap, err := h.Server.Snapshot("pods")
	require.NoError(t, err)
	require.Len(t, state, len(snap))
	for k, o := range snap {
		require.Equal(t, strconvU(o.ResourceVersion), state[k], "pod %s", k)
	}
}

func TestLoadPods(t *testing.T) {
	srv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	rv, err := srv.LoadPods(3000, 7, 1)
	require.NoError(t, err)
	require.Equal(t, srv.ResourceVersion(), rv)
	st := srv.Stats()
	require.Equal(t, 3000, st.Objects["pods"])
	require.Equal(t, 2+7, st.Objects["namespaces"])
	obj, err := srv.Get("pods", "ns-000", podNames(t, srv)[0][len("ns-000/"):])
	require.NoError(t, err)
	require.Greater(t, len(obj.JSON), 3000, "generated pods are realistic in size")
	require.Less(t, len(obj.JSON), 5000)
	_, err = srv.LoadPods(1, 0, 1)
	require.Error(t, err)
}

// TestLoadPodsServesEveryPod checks LoadPods(n) serves n pods: the names
// it generates never collide (they once did, 100,000 came out as 99,928).
func TestLoadPodsServesEveryPod(t *testing.T) {
	srv, err := sim.New(sim.Options{Seed: 7})
	require.NoError(t, err)
	const n = 100_000
	_, err = srv.LoadPods(n, 5, 7)
	require.NoError(t, err)
	require.Len(t, podNames(t, srv), n)
}
