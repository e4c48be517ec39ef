package informer

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
)

// These helpers run servers and clients on an in-memory network inside a
// testing/synctest bubble, where time is fake: a test asserts the
// informer's schedule (backoff, deadlines, timeouts) to the nanosecond and
// never waits for it in real time.

// memServe serves h at addr on n until the test ends.
func memServe(t *testing.T, n *testutil.MemNet, addr string, h http.Handler) {
	t.Helper()
	ln, err := n.Listen(addr)
	require.NoError(t, err)
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() { _ = srv.Serve(ln); close(done) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
}

// newMemScripted serves a scripted server at addr on n.
func newMemScripted(t *testing.T, n *testutil.MemNet, addr string, steps ...step) *scripted {
	s := &scripted{steps: steps}
	memServe(t, n, addr, http.HandlerFunc(s.serve))
	return s
}

// memClient returns a client of the server at addr on n.
func memClient(t *testing.T, n *testutil.MemNet, addr string) *kube.Client {
	t.Helper()
	tr := n.Transport()
	c, err := kube.NewClient(&kube.Config{Host: "http://" + addr, HTTP: kube.HTTPConfig{Transport: tr}})
	require.NoError(t, err)
	t.Cleanup(tr.CloseIdleConnections)
	return c
}

// memSim is a simulated API server on a MemNet that a test can stop and
// replace on the same address, as an API server restart does.
type memSim struct {
	Server *sim.Server
	cancel context.CancelFunc
	done   chan error
}

// startMemSim serves a new sim.Server at addr on n until stop or the end
// of the test.
func startMemSim(t *testing.T, n *testutil.MemNet, addr string, opts sim.Options) *memSim {
	t.Helper()
	srv, err := sim.New(opts)
	require.NoError(t, err)
	ln, err := n.Listen(addr)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	m := &memSim{Server: srv, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- srv.Serve(ctx, ln) }()
	t.Cleanup(m.stop)
	return m
}

// stop ends the server and every stream it serves, and waits for it.
func (m *memSim) stop() {
	if m.cancel == nil {
		return
	}
	m.cancel()
	m.cancel = nil
	if err := <-m.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		panic(err)
	}
}

// memOptions are fastOptions for a server at addr on n.
func memOptions(t *testing.T, n *testutil.MemNet, addr string) Options[*testPod] {
	opts := fastOptions("http://"+addr, t, ListPaged)
	opts.Client = memClient(t, n, addr)
	return opts
}
