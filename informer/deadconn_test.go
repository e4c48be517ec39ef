package informer

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/chaosnet"
	"github.com/kwatch/kwatch/internal/sim"
	"github.com/kwatch/kwatch/internal/sim/simtest"
	"github.com/kwatch/kwatch/watch"
)

// TestDeadConnectionIsDetected freezes the connection under a healthy
// watch (bytes stop both ways, nothing is closed: a peer that vanished) and
// measures how long the informer takes to notice, reconnect and deliver a
// change made meanwhile, over HTTP/1.1 (idle deadline only) and HTTP/2
// (health pings and the idle deadline).
func TestDeadConnectionIsDetected(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"http1.1", false}, {"http2", true}} {
		t.Run(tc.name, func(t *testing.T) {
			h := simtest.Start(t, sim.Options{TLS: tc.tls, BookmarkInterval: 250 * time.Millisecond})
			loadPods(t, h.Server, 3)
			proxy := chaosnet.New(h.URL[len("http://"):])
			if tc.tls {
				proxy = chaosnet.New(h.URL[len("https://"):])
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- proxy.Serve(ctx, ln) }()
			t.Cleanup(func() { cancel(); <-done })

			cfg := &watch.Config{Host: "http://" + ln.Addr().String(),
				ReadIdleTimeout: 500 * time.Millisecond, PingTimeout: 500 * time.Millisecond}
			if tc.tls {
				cfg.Host = "https://" + ln.Addr().String()
				cfg.TLS.CAData = h.CACertPEM
			}
			c, err := watch.NewClient(cfg)
			require.NoError(t, err)
			const bound = 2 * time.Second
			opts := simOptions(t, h.URL, ListPaged)
			opts.Client, opts.IdleTimeout = c, bound
			inf, err := New(opts)
			require.NoError(t, err)
			start(t, inf)
			require.True(t, inf.WaitForSync(ctxTimeout(t)))
			require.Eventually(t, func() bool { return inf.Health().Watching }, waitLong, tick)

			frozen := time.Now()
			require.GreaterOrEqual(t, proxy.Freeze(), 1)
			_, err = h.Server.PutPod(sim.Pod{Namespace: "ns-0", Name: "after-freeze"})
			require.NoError(t, err)
			require.Eventually(t, func() bool { _, ok := inf.Store().Get("ns-0/after-freeze"); return ok },
				waitLong, tick, "the change made behind the dead connection arrives on a new one")
			took := time.Since(frozen)
			st := inf.Stats()
			t.Logf("%s: dead connection detected and watch resumed in %v (bound %v; idle timeouts %d, other errors %d)",
				tc.name, took.Round(time.Millisecond), bound, st.IdleTimeouts, st.Errors)
			require.GreaterOrEqual(t, st.IdleTimeouts+st.Errors, int64(1), "the dead watch was ended by the client")
		})
	}
}
