package suite

import (
	"context"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/conformance/harness"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

func lagCases() []Case {
	return []Case{{Name: "watch/lagged-through-proxy", Run: testLaggedWatch}}
}

// watchLag is the lag of testLaggedWatch.
const watchLag = 500 * time.Millisecond

// testLaggedWatch: through a harness.LagProxy holding the pods' watch
// bytes for watchLag, every event arrives at least watchLag after the
// write that made it began, in order, while a list through the same proxy
// already shows the objects. Only lower bounds on time are asserted.
func testLaggedWatch(t T, e *Env) {
	p, err := harness.NewLagProxy(e.Target.Config(Admin))
	require.NoError(t, err)
	require.NoError(t, p.SetLag("pods", watchLag))
	ctx, cancel := context.WithCancel(e.Ctx)
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("lag proxy: %v", err)
		}
	})
	c := newClient(t, &kube.Config{Host: p.URL})

	page, err := watch.List[*Pod](e.Ctx, c, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{})
	require.NoError(t, err)
	st := openWatch[*Pod](t, e, c, watch.WatchOptions{ResourceVersion: page.ResourceVersion})
	names := []string{"lag-a", "lag-b", "lag-c"}
	began := map[string]time.Time{}
	for _, name := range names {
		began[name] = time.Now()
		_, err := e.Kube.CreatePod(e.Ctx, e.NS, name, nil)
		require.NoError(t, err)
	}
	listed, err := watch.List[*Pod](e.Ctx, c, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{})
	require.NoError(t, err)
	require.Len(t, listed.Items, len(names), "a list through the proxy is not delayed")
	for _, want := range names {
		ev := nextChange(t, st)
		require.Equal(t, watch.Added, ev.Type)
		require.Equal(t, want, ev.Object.Name, "events in order")
		require.GreaterOrEqual(t, time.Since(began[want]), watchLag, "%s arrived early", want)
	}
}
