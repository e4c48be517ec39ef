package informer

import (
	"context"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/chaosnet"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
)

// TestDeadConnectionIsDetectedOnSchedule freezes the connection under a
// healthy watch (bytes stop both ways, nothing is closed: a peer that
// vanished). Under synctest the schedule is exact: the watch is ended one
// IdleTimeout after its last byte (a bookmark every 250 ms), the informer
// reconnects at once (the stream had worked), confirms its RV and receives
// the change made behind the dead connection.
func TestDeadConnectionIsDetectedOnSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = 2 * time.Second
		const bookmarks = 250 * time.Millisecond
		n := &testutil.MemNet{}
		srv, err := sim.New(sim.Options{BookmarkInterval: bookmarks})
		require.NoError(t, err)
		loadPods(t, srv, 3)
		var lastBytes time.Time
		memServe(t, n, "api:80", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			srv.Handler().ServeHTTP(w, r)
		}))
		opts := memOptions(t, n, "api:80")
		opts.IdleTimeout = idle
		inf, err := New(opts)
		require.NoError(t, err)
		arrivedAt := make(chan time.Time, 1)
		_, err = inf.AddHandler(HandlerFuncs[*testPod]{AddFunc: func(p *testPod, _ bool) {
			if p.Name == "after-freeze" {
				arrivedAt <- time.Now()
			}
		}}, HandlerOptions{})
		require.NoError(t, err)
		start(t, inf)
		require.True(t, inf.WaitForSync(t.Context()))
		time.Sleep(10 * time.Second) // a healthy watch, kept alive by bookmarks
		synctest.Wait()
		require.True(t, inf.Health().Watching)
		lastBytes = inf.Health().LastActivity
		frozen := time.Now()
		require.GreaterOrEqual(t, n.Freeze(), 1)
		_, err = srv.PutPod(sim.Pod{Namespace: "ns-0", Name: "after-freeze"})
		require.NoError(t, err)
		var arrived time.Duration
		select {
		case at := <-arrivedAt:
			arrived = at.Sub(lastBytes)
		case <-time.After(time.Minute):
			t.Fatalf("the change made at %v never arrived", frozen)
		}
		require.Equal(t, idle, arrived, "the change arrives one idle deadline after the last byte")
		require.EqualValues(t, 1, inf.Stats().IdleTimeouts)
		require.EqualValues(t, 1, inf.Stats().Confirms)
	})
}

// TestDeadConnectionIsDetectedOverHTTP2 freezes the connection under a
// watch over TLS and HTTP/2 on a real loopback proxy: the health pings or
// the idle deadline end it and the informer resumes on a new connection.
// Only the outcome is asserted; TestDeadConnectionIsDetectedOnSchedule
// asserts the schedule.
func TestDeadConnectionIsDetectedOverHTTP2(t *testing.T) {
	h := simkit.Start(t, sim.Options{TLS: true, BookmarkInterval: 250 * time.Millisecond})
	loadPods(t, h.Server, 3)
	proxy := chaosnet.New(h.URL[len("https://"):])
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- proxy.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })

	cfg := &kube.Config{Host: "https://" + ln.Addr().String(),
		HTTP: kube.HTTPConfig{ReadIdleTimeout: 500 * time.Millisecond, PingTimeout: 500 * time.Millisecond}}
	cfg.TLS.CAData = h.CACertPEM
	c, err := kube.NewClient(cfg)
	require.NoError(t, err)
	opts := simOptions(t, h.URL, ListPaged)
	opts.Client, opts.IdleTimeout = c, 2*time.Second
	inf, err := New(opts)
	require.NoError(t, err)
	start(t, inf)
	require.True(t, inf.WaitForSync(ctxTimeout(t)))
	require.Eventually(t, func() bool { return inf.Health().Watching }, waitLong, tick)

	require.GreaterOrEqual(t, proxy.Freeze(), 1)
	_, err = h.Server.PutPod(sim.Pod{Namespace: "ns-0", Name: "after-freeze"})
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, ok := inf.Store().Get("ns-0/after-freeze"); return ok },
		waitLong, tick, "the change made behind the dead connection arrives on a new one")
	st := inf.Stats()
	require.GreaterOrEqual(t, st.IdleTimeouts+st.Errors, int64(1), "the dead watch was ended by the client")
	require.GreaterOrEqual(t, proxy.Fired()[chaosnet.FaultFreeze], int64(1), "the freeze fired")
}
