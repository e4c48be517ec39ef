package informer

import (
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

type listReq struct {
	at      time.Time
	rv      string
	rvm     string
	limit   string
	stream  bool
	confirm bool
}

// TestServerRestartDoesNotCauseRelistStorm restarts the server's watches
// with their history lost: every informer's resumed watch gets a 410. Each
// informer first confirms its RV (one item), then relists from that RV
// (served from the server's cache, not a quorum read), and the relists are
// spread over the first backoff step instead of landing at one instant.
// It runs under synctest: the spread is the informer's own jitter, read off
// a fake clock.
func TestServerRestartDoesNotCauseRelistStorm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 20
		const initial = 800 * time.Millisecond
		srv, err := sim.New(sim.Options{})
		require.NoError(t, err)
		loadPods(t, srv, 10)
		var mu sync.Mutex
		var lists []listReq
		recording := false
		net := &testutil.MemNet{}
		memServe(t, net, "api:80", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			stream := q.Get("sendInitialEvents") == "true"
			if q.Get("watch") == "" || stream {
				mu.Lock()
				if recording {
					lists = append(lists, listReq{at: time.Now(), rv: q.Get("resourceVersion"), rvm: q.Get("resourceVersionMatch"),
						limit: q.Get("limit"), stream: stream, confirm: q.Get("limit") == "1" && !stream})
				}
				mu.Unlock()
			}
			srv.Handler().ServeHTTP(w, r)
		}))
		c := memClient(t, net, "api:80")
		infs := make([]*Informer[*testPod], n)
		for i := range infs {
			mode := []ListMode{ListPaged, ListAuto}[i%2]
			infs[i], err = New(Options[*testPod]{Client: c, Resource: kube.Pods, Logger: quietLogger(),
				Tuning: Tuning{ListMode: mode, Backoff: Backoff{Initial: initial}},
			})
			require.NoError(t, err)
			start(t, infs[i])
		}
		for _, inf := range infs {
			require.True(t, inf.WaitForSync(t.Context()))
		}
		time.Sleep(10 * time.Second) // the watches run a while, quiet
		synctest.Wait()
		require.EqualValues(t, n, srv.Stats().ActiveWatches)
		mu.Lock()
		recording = true
		mu.Unlock()
		// The restart: the network goes silent, the cluster moves on, the
		// server comes back without its watch history and every connection drops.
		require.GreaterOrEqual(t, net.Freeze(), n)
		_, err = srv.PutPod(sim.Pod{Namespace: "ns-0", Name: "after-restart"})
		require.NoError(t, err)
		srv.DropWatches(true)
		restarted := time.Now()
		net.CutAll()
		time.Sleep(time.Minute)
		synctest.Wait()
		for _, inf := range infs {
			_, ok := inf.Store().Get("ns-0/after-restart")
			require.True(t, ok)
		}
		mu.Lock()
		defer mu.Unlock()
		var confirms, relists []listReq
		for _, l := range lists {
			if l.confirm {
				confirms = append(confirms, l)
			} else {
				relists = append(relists, l)
			}
		}
		require.Len(t, confirms, n, "one confirmation per informer")
		require.Len(t, relists, n, "one relist per informer")
		instants := map[time.Time]bool{}
		for _, l := range relists {
			require.NotEmpty(t, l.rv, "relist from the last RV, not a quorum read from \"\"")
			require.Equal(t, watch.MatchNotOlderThan, l.rvm)
			at := l.at.Sub(restarted)
			require.True(t, at >= 0 && at < initial, "relist %v after the restart, outside the jitter window [0, %v)", at, initial)
			instants[l.at] = true
		}
		require.Greater(t, len(instants), n/2, "relists spread by jitter, not at one instant")
	})
}
