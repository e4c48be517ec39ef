package watch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/kube"
)

// pipeListener hands the server the far ends of net.Pipe connections that
// its dial makes: a network that lives inside a synctest bubble, so the
// bubble's clock drives every deadline of client and server alike.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// startPipeSim serves a simulator over pipes inside the caller's synctest
// bubble until the test's function returns, and returns a Config for it.
func startPipeSim(t *testing.T, opts sim.Options) (*sim.Server, *kube.Config) {
	srv, err := sim.New(opts)
	require.NoError(t, err)
	cfg := servePipe(t, srv.Serve)
	return srv, cfg
}

// startPipeHandler serves h over pipes like startPipeSim.
func startPipeHandler(t *testing.T, h http.Handler) *kube.Config {
	return servePipe(t, func(ctx context.Context, ln net.Listener) error {
		hs := &http.Server{Handler: h}
		stopped := context.AfterFunc(ctx, func() { hs.Close() })
		defer stopped()
		if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
}

// servePipe runs serve on a pipe listener until the test ends and waits for
// it to return.
func servePipe(t *testing.T, serve func(context.Context, net.Listener) error) *kube.Config {
	ln := newPipeListener()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, ln) }()
	tr := &http.Transport{DialContext: ln.dial}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		cancel()
		require.NoError(t, <-served)
	})
	return &kube.Config{Host: "http://127.0.0.1", HTTP: kube.HTTPConfig{Transport: tr}}
}
