package informer

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// TestHostileWatchStreams feeds the informer streams a broken or hostile
// server could send. Each must end that stream with an error, keep the
// store's last good state, and resume from the last good RV.
func TestHostileWatchStreams(t *testing.T) {
	big := `{"type":"ADDED","object":` + podJSON("big", "12")[:len(podJSON("big", "12"))-1] +
		`,"pad":"` + strings.Repeat("x", 100<<10) + `"}}`
	tests := []struct {
		name  string
		frame string
		extra string // a key the frame adds when it is accepted as an object
		want  string // in the logged error
	}{
		{"oversized frame", big, "", "exceeds the 65536-byte limit"},
		{"deeply nested JSON", `{"type":"ADDED","object":` + strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat(`}`, 5000) + `}`, "", "nesting too deep"},
		// Invalid UTF-8 inside a string becomes U+FFFD, as the Kubernetes
		// decoder does: the object is accepted under that key, nothing panics.
		{"invalid UTF-8", "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\xff\xfe\",\"namespace\":\"ns\",\"resourceVersion\":\"12\"}}}", "ns/\ufffd\ufffd", ""},
		{"huge number", `{"type":"ADDED","object":{"metadata":{"name":"n","generation":1e999999,"resourceVersion":"12"}}}`, "", "does not decode"},
		{"status with a wrong code", `{"type":"ERROR","object":{"kind":"Status","code":200,"message":"fine, really"}}`, "", "server answered 200"},
		{"unknown event type", `{"type":"EXPLODED","object":{}}`, "", `unknown event type`},
		{"not JSON at all", `<html>502 Bad Gateway</html>`, "", "unexpected byte '<'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScripted(t,
				answer(200, listJSON("10", "", podJSON("a", "5"))),
				stream(true, eventJSON("MODIFIED", podJSON("a", "11")), tt.frame),
				answer(200, listJSON("13", "")), // the confirmation of the resume RV
				stream(false, eventJSON("ADDED", podJSON("c", "13"))),
			)
			opts := fastOptions(s.srv.URL, t, ListPaged)
			opts.Decoder.MaxFrameSize = 64 << 10
			logs := &testutil.Buffer{}
			opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			inf, err := New(opts)
			require.NoError(t, err)
			start(t, inf)
			q := s.waitRequests(t, 4)
			want := map[string]string{"ns/a": "11", "ns/c": "13"}
			if tt.extra != "" {
				want[tt.extra] = "12"
				require.Equal(t, "12", q[3].Get("resourceVersion"), "resume after the accepted event")
				require.Eventually(t, func() bool { return len(storeRVs(inf)) == 3 }, waitLong, tick)
				require.Equal(t, want, storeRVs(inf))
				return
			}
			require.Equal(t, "11", q[3].Get("resourceVersion"), "resume after the last good event")
			require.Eventually(t, func() bool { return len(storeRVs(inf)) == 2 }, waitLong, tick)
			require.Equal(t, want, storeRVs(inf))
			require.GreaterOrEqual(t, inf.Stats().Errors, int64(1))
			require.Contains(t, logs.String(), tt.want)
		})
	}
}

// TestCredentialsNeverLogged runs informers with a known token against a
// server that refuses it, then accepts it, with every fault that makes the
// engine log, at debug level, and searches every log line for the token.
func TestCredentialsNeverLogged(t *testing.T) {
	const secret = "kw-secret-token-5f1c9e"
	h := simkit.Start(t, sim.Options{BearerToken: secret})
	loadPods(t, h.Server, 5)
	mu := &testutil.Buffer{}
	logger := slog.New(slog.NewTextHandler(mu, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, token := range []string{secret + "-wrong", secret} {
		c, err := kube.NewClient(&kube.Config{Host: h.URL, Auth: kube.AuthConfig{BearerToken: token}})
		require.NoError(t, err)
		opts := simOptions(t, h.URL, ListAuto)
		opts.Client, opts.Logger = c, logger
		inf, err := New(opts)
		require.NoError(t, err)
		cancel := start(t, inf)
		if token == secret {
			require.True(t, inf.WaitForSync(ctxTimeout(t)))
			require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultError, Code: 503, Count: 2}))
			h.Server.DropWatches(true)
			_, err := h.Server.PutPod(sim.Pod{Namespace: "ns-0", Name: "x"})
			require.NoError(t, err)
			require.Eventually(t, func() bool { _, ok := inf.Store().Get("ns-0/x"); return ok }, waitLong, tick)
		} else {
			require.Eventually(t, func() bool { return kube.IsUnauthorized(inf.Health().LastError) }, waitLong, tick)
			require.NotContains(t, inf.Health().LastError.Error(), secret)
		}
		cancel()
	}
	out := mu.String()
	require.NotEmpty(t, out, "the run logged something")
	require.NotContains(t, out, secret, "a credential reached the logs")
	require.NotContains(t, out, "kw-secret", "a credential prefix reached the logs")
}

// rvBlindStreams is an API server that honours sendInitialEvents from
// resourceVersion "" but serves it from any other resourceVersion as a
// plain watch, as an API server that predates the parameter (or an
// aggregated one) does; it also answers the next plain watches it is told
// to with a 410, as a server whose watch window moved on does.
type rvBlindStreams struct {
	next http.Handler
	mu   sync.Mutex
	gone int          // plain watches still to answer with a 410; guarded by mu
	seen []url.Values // every request's query, in order; guarded by mu
}

func (h *rvBlindStreams) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	h.mu.Lock()
	h.seen = append(h.seen, r.URL.Query())
	expire := false
	if q.Get("watch") != "" && q.Get("sendInitialEvents") == "" && h.gone > 0 {
		h.gone--
		expire = true
	}
	h.mu.Unlock()
	switch {
	case expire:
		stream(true, eventJSON("ERROR", statusJSON(410, "Expired")))(w, r)
		return
	case q.Get("sendInitialEvents") == "true" && q.Get("resourceVersion") != "":
		q.Del("sendInitialEvents")
		q.Del("resourceVersionMatch")
		r = r.Clone(r.Context())
		r.URL.RawQuery = q.Encode()
	}
	h.next.ServeHTTP(w, r)
}

func (h *rvBlindStreams) expireNextWatch() {
	h.mu.Lock()
	h.gone++
	h.mu.Unlock()
}

func (h *rvBlindStreams) requests() []url.Values {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]url.Values(nil), h.seen...)
}

// TestStreamingListNotHonouredFromAnRV: with ListAuto and the default
// backoff, the first streaming list (from "") works; after a 410 the
// streaming list from the informer's RV gets plain watch events. The
// informer falls back to a paged list from that same RV at once and stays
// on paged lists, so its store follows the server: it is never stuck
// retrying a request the server does not honour.
func TestStreamingListNotHonouredFromAnRV(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &testutil.MemNet{}
		srv, err := sim.New(sim.Options{})
		require.NoError(t, err)
		h := &rvBlindStreams{next: srv.Handler()}
		memServe(t, n, "api:80", h)
		putPods(t, srv, 0, 5)
		opts := memOptions(t, n, "api:80")
		opts.ListMode, opts.Backoff = ListAuto, Backoff{}
		inf, err := New(opts)
		require.NoError(t, err)
		start(t, inf)
		require.True(t, inf.WaitForSync(t.Context()))
		synctest.Wait()
		first := h.requests()
		require.Len(t, first, 1)
		require.Equal(t, "true", first[0].Get("sendInitialEvents"), "the first list streams, from \"\"")

		for round := range 2 {
			// The watch ends, the resumed one gets a 410, and while the
			// informer relists, objects change.
			h.expireNextWatch()
			srv.DropWatches(false)
			synctest.Wait()
			_, err := srv.PutPod(sim.Pod{Namespace: "ns", Name: "p-1", Restarts: int32(round + 1)})
			require.NoError(t, err)
			_, err = srv.Delete("pods", "ns", fmt.Sprintf("p-%d", 2+round))
			require.NoError(t, err)
			putPods(t, srv, 10+round, 11+round)
			time.Sleep(10 * time.Minute)
			synctest.Wait()
			require.Equal(t, serverState(t, srv), storeRVs(inf), "round %d: the store follows the server", round)
		}

		// Exactly one streaming list from an RV: the one the server did not
		// honour. The next list is paged, from the same RV, and so is every
		// list after it.
		var fromRV []url.Values
		for _, q := range h.requests()[1:] {
			if q.Get("sendInitialEvents") == "true" {
				fromRV = append(fromRV, q)
			}
		}
		require.Len(t, fromRV, 1, "no streaming list after the first that was not honoured")
		var lists []url.Values
		for _, q := range h.requests() {
			if q.Get("watch") == "" && q.Get("limit") != "1" && q.Get("continue") == "" {
				lists = append(lists, q)
			}
		}
		require.Len(t, lists, 2, "one paged list per 410")
		for _, q := range lists {
			require.NotEmpty(t, q.Get("resourceVersion"))
			require.Equal(t, watch.MatchNotOlderThan, q.Get("resourceVersionMatch"))
		}
		require.Equal(t, fromRV[0].Get("resourceVersion"), lists[0].Get("resourceVersion"), "the paged list is from the same RV")
	})
}
