package informer

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/backoff"
	"github.com/kwatch/kwatch/internal/chaosnet"
	"github.com/kwatch/kwatch/internal/sim"
	"github.com/kwatch/kwatch/watch"
)

type listReq struct {
	at     time.Time
	rv     string
	rvm    string
	stream bool
}

// TestServerRestartDoesNotCauseRelistStorm restarts the server's watches
// with their history lost: every informer's resumed watch gets a 410. The
// informers must relist from their last RV (served from the server's
// cache, not a quorum read), and not all at the same instant.
func TestServerRestartDoesNotCauseRelistStorm(t *testing.T) {
	const n = 20
	srv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	loadPods(t, srv, 10)
	var mu sync.Mutex
	var lists []listReq
	recording := false
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		stream := q.Get("sendInitialEvents") == "true"
		if q.Get("watch") == "" || stream {
			mu.Lock()
			if recording {
				lists = append(lists, listReq{at: time.Now(), rv: q.Get("resourceVersion"), rvm: q.Get("resourceVersionMatch"), stream: stream})
			}
			mu.Unlock()
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	proxy := chaosnet.New(hs.Listener.Addr().String())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	pctx, pcancel := context.WithCancel(context.Background())
	pdone := make(chan error, 1)
	go func() { pdone <- proxy.Serve(pctx, ln) }()
	t.Cleanup(func() { pcancel(); <-pdone })
	c, err := watch.NewClient(&watch.Config{Host: "http://" + ln.Addr().String()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	infs := make([]*Informer[*testPod], n)
	for i := range infs {
		mode := []ListMode{ListPaged, ListAuto}[i%2]
		infs[i], err = New(Options[*testPod]{Client: c, Resource: watch.Pods, ListMode: mode, Logger: quietLogger(),
			Backoff: backoff.Options{Initial: 800 * time.Millisecond}})
		require.NoError(t, err)
		wg.Add(1)
		go func() { defer wg.Done(); _ = infs[i].Run(ctx) }()
	}
	for _, inf := range infs {
		require.True(t, inf.WaitForSync(ctxTimeout(t)))
	}
	require.Eventually(t, func() bool { return srv.Stats().ActiveWatches == n }, waitLong, tick)
	mu.Lock()
	recording = true
	mu.Unlock()
	// The restart: the network goes silent, the cluster moves on, the
	// server comes back without its watch history and every connection drops.
	proxy.Freeze()
	_, err = srv.PutPod(sim.Pod{Namespace: "ns-0", Name: "after-restart"})
	require.NoError(t, err)
	srv.DropWatches(true)
	proxy.CutAll()
	for _, inf := range infs {
		require.Eventually(t, func() bool { _, ok := inf.Store().Get("ns-0/after-restart"); return ok }, waitLong, tick)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, lists, n, "one relist per informer")
	first, last := lists[0].at, lists[0].at
	for _, l := range lists {
		require.NotEmpty(t, l.rv, "relist from the last RV, not a quorum read from \"\"")
		require.Equal(t, watch.MatchNotOlderThan, l.rvm)
		first, last = minTime(first, l.at), maxTime(last, l.at)
	}
	spread := last.Sub(first)
	t.Logf("%d informers relisted over %v after the restart", n, spread.Round(time.Millisecond))
	require.Greater(t, spread, 50*time.Millisecond, fmt.Sprintf("relists spread by jitter (got %v)", spread))
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
