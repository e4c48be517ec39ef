package controller_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
)

// The fencing tests run a simulated API server and several managers in
// a testing/synctest bubble, with the default lease timings: each
// replica reaches the server over its own MemNet (its link), so a test
// can fail one replica's Lease writes or cut it off while the others go
// on. The history below is the independent recorder the checks read:
// what arrived at the server, from whom, and when; and, from the tests'
// reconcilers, which replica reconciled which key when. The code under
// test records nothing in it.

// history is the fencing tests' record. Safe for concurrent use.
type history struct {
	mu sync.Mutex
	// writes are the ConfigMap writes the server applied (2xx), in order
	// of arrival.
	writes []arrival
	// holders are the Lease writes the server applied: who held the
	// election Lease from when (by holderIdentity), in order.
	holders []arrival
	// reconciles of each key, in order of start.
	reconciles map[string][]span
	// seq orders the records: in fake time many happen at one instant.
	seq int
}

// arrival is one request the server applied.
type arrival struct {
	replica, key string // key: "namespace/name" of a ConfigMap; the holder for a Lease
	at           time.Time
	// seq orders it among the records: a ConfigMap write's is taken when
	// it arrived at the server, before it was applied; a Lease holder's
	// once the write that named it was applied.
	seq int
}

// span is one reconcile: from start until it returned or its context
// was cancelled, whichever came first (after that the replica may no
// longer act: the write fence refuses what it still tries).
type span struct {
	replica    string
	start, end time.Time // end is zero while it runs
	seq        int       // of the start
}

func newHistory() *history { return &history{reconciles: map[string][]span{}} }

// begin records the start of a reconcile of key on replica and returns
// the function that ends it; it also ends when ctx is cancelled.
func (h *history) begin(ctx context.Context, replica, key string) func() {
	h.mu.Lock()
	h.seq++
	h.reconciles[key] = append(h.reconciles[key], span{replica: replica, start: time.Now(), seq: h.seq})
	i := len(h.reconciles[key]) - 1
	h.mu.Unlock()
	var once sync.Once
	end := func() {
		once.Do(func() {
			h.mu.Lock()
			h.reconciles[key][i].end = time.Now()
			h.mu.Unlock()
		})
	}
	stop := context.AfterFunc(ctx, end)
	return func() { stop(); end() }
}

// arrive takes the sequence number of a request arriving now.
func (h *history) arrive() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	return h.seq
}

// wrote records a ConfigMap write that arrived at seq and was applied.
func (h *history) wrote(replica, key string, seq int) {
	h.mu.Lock()
	h.writes = append(h.writes, arrival{replica: replica, key: key, at: time.Now(), seq: seq})
	h.mu.Unlock()
}

func (h *history) held(holder string) {
	h.mu.Lock()
	h.seq++
	if n := len(h.holders); n == 0 || h.holders[n-1].key != holder {
		h.holders = append(h.holders, arrival{key: holder, at: time.Now(), seq: h.seq})
	}
	h.mu.Unlock()
}

// overlaps lists every pair of reconciles of one key on two replicas
// whose spans overlap.
func (h *history) overlaps() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for key, spans := range h.reconciles {
		for i, a := range spans {
			for _, b := range spans[i+1:] {
				if a.replica == b.replica {
					continue
				}
				if (a.end.IsZero() || b.start.Before(a.end)) && (b.end.IsZero() || a.start.Before(b.end)) {
					out = append(out, fmt.Sprintf("%s: %s %v-%v and %s %v-%v", key,
						a.replica, a.start, a.end, b.replica, b.start, b.end))
				}
			}
		}
	}
	return out
}

// staleWrites lists every write the server applied from a replica for
// a key another replica had started reconciling since that replica last
// did, and, when leases is true, every write that arrived while the
// election Lease (as the server last wrote it) named another holder.
func (h *history) staleWrites(leases bool) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, w := range h.writes {
		var last string // who last started reconciling w.key before w arrived
		for _, s := range h.reconciles[w.key] {
			if s.seq > w.seq {
				break
			}
			last = s.replica
		}
		if last != w.replica {
			out = append(out, fmt.Sprintf("%s from %s at %v, after %s started reconciling it", w.key, w.replica, w.at, last))
		}
		if !leases {
			continue
		}
		holder := ""
		for _, l := range h.holders {
			if l.seq > w.seq {
				break
			}
			holder = l.key
		}
		if holder != w.replica {
			out = append(out, fmt.Sprintf("%s from %s at %v while the Lease named %q", w.key, w.replica, w.at, holder))
		}
	}
	return out
}

func (h *history) count() (writes, reconciles int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.reconciles {
		reconciles += len(s)
	}
	return len(h.writes), reconciles
}

// fenceCluster is the simulated server the replicas share.
type fenceCluster struct {
	t   *testing.T
	srv *sim.Server
	h   *history
	// election is the Lease of the leader-election tests, whose holder
	// the history follows.
	election string
}

func newFenceCluster(t *testing.T) *fenceCluster {
	t.Helper()
	srv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	return &fenceCluster{t: t, srv: srv, h: newHistory()}
}

// fenceLink is one replica's network path to the server. Its handler
// records what the server applied and can answer the replica's Lease
// writes 500.
type fenceLink struct {
	c    *fenceCluster
	id   string
	net  *testutil.MemNet
	addr string

	mu         sync.Mutex
	ln         *testutil.MemListener // guarded by mu
	failLeases bool                  // guarded by mu
	cut        bool                  // guarded by mu
	// hold, when set, is called before each request is served and may
	// block it (a write delayed on its way); guarded by mu.
	hold func(*http.Request)
	// lose, when set, is called before each request is served; when it
	// returns a channel the link breaks the replica's connection at once
	// (the replica sees no answer) and delivers the request to the server
	// once the channel is closed: a write whose answer was lost while the
	// server still had it on its way. Guarded by mu.
	lose func(*http.Request) <-chan struct{}
}

// connect serves the cluster on a new MemNet for replica id and returns
// a client on it, whose requests pass a proxy (fence_proxy_rig_test.go)
// that forwards them all until told otherwise.
func (c *fenceCluster) connect(id string) (*kube.Client, *fenceLink, *proxied) {
	t := c.t
	t.Helper()
	l := &fenceLink{c: c, id: id, net: &testutil.MemNet{}, addr: id + ":80"}
	l.serve()
	tr := l.net.Transport()
	p := &proxied{base: tr, link: l}
	kc, err := kube.NewClient(&kube.Config{Host: "http://" + l.addr, HTTP: kube.HTTPConfig{Transport: p}})
	require.NoError(t, err)
	t.Cleanup(tr.CloseIdleConnections)
	return kc, l, p
}

func (l *fenceLink) serve() {
	ln, err := l.net.Listen(l.addr)
	require.NoError(l.c.t, err)
	hs := &http.Server{Handler: http.HandlerFunc(l.handle)}
	done := make(chan struct{})
	go func() { _ = hs.Serve(ln); close(done) }()
	l.mu.Lock()
	l.ln = ln
	l.mu.Unlock()
	l.c.t.Cleanup(func() {
		_ = hs.Close()
		<-done
	})
}

// statusWriter keeps the status the server answered.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (l *fenceLink) handle(w http.ResponseWriter, r *http.Request) {
	write := r.Method != http.MethodGet && r.Method != http.MethodHead
	lease := strings.Contains(r.URL.Path, "/leases")
	l.mu.Lock()
	fail := l.failLeases && lease && write
	hold, lose := l.hold, l.lose
	l.mu.Unlock()
	if hold != nil {
		hold(r)
	}
	if lose != nil {
		if later := lose(r); later != nil {
			l.deliverLater(r, later)
			panic(http.ErrAbortHandler) // the replica's connection breaks: no answer
		}
	}
	if fail {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":500,"reason":"InternalError","message":"injected"}`))
		return
	}
	l.serveAndRecord(w, r, write, lease)
}

// deliverLater serves a copy of r to the server once later is closed,
// recording it as handle does; nobody reads the answer.
func (l *fenceLink) deliverLater(r *http.Request, later <-chan struct{}) {
	body, err := io.ReadAll(r.Body)
	require.NoError(l.c.t, err)
	cp := r.Clone(context.Background())
	go func() {
		<-later
		cp.Body = io.NopCloser(bytes.NewReader(body))
		l.serveAndRecord(httptest.NewRecorder(), cp, true, strings.Contains(cp.URL.Path, "/leases"))
	}()
}

// serveAndRecord serves r and records in the history what the server
// applied.
func (l *fenceLink) serveAndRecord(w http.ResponseWriter, r *http.Request, write, lease bool) {
	seq := l.c.h.arrive()
	sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
	l.c.srv.Handler().ServeHTTP(sw, r)
	if !write || sw.code/100 != 2 {
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/api/v1")
	switch {
	case strings.HasPrefix(path, "/namespaces/") && strings.Contains(path, "/configmaps/"):
		parts := strings.Split(path, "/") // "", namespaces, ns, configmaps, name
		l.c.h.wrote(l.id, parts[2]+"/"+parts[4], seq)
	case lease: // a create has no name in its path: read the Lease back
		l.c.h.held(l.c.holder())
	}
}

// holder reads the election Lease's holder, in process.
func (c *fenceCluster) holder() string {
	obj, err := c.srv.Get("leases.coordination.k8s.io", "demo", "managers")
	if err != nil {
		return ""
	}
	var l struct {
		Spec struct {
			HolderIdentity string `json:"holderIdentity"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(obj.JSON, &l); err != nil {
		return ""
	}
	return l.Spec.HolderIdentity
}

// setFailLeases answers (or stops answering) the replica's Lease writes
// with 500.
func (l *fenceLink) setFailLeases(on bool) {
	l.mu.Lock()
	l.failLeases = on
	l.mu.Unlock()
}

// partition cuts the replica off: new connections are refused, open
// ones go silent. heal undoes it (the silent connections are closed).
func (l *fenceLink) partition() {
	l.mu.Lock()
	ln, was := l.ln, l.cut
	l.cut = true
	l.mu.Unlock()
	if was {
		return
	}
	_ = ln.Close()
	l.net.Freeze()
}

func (l *fenceLink) heal() {
	l.mu.Lock()
	was := l.cut
	l.cut = false
	l.mu.Unlock()
	if !was {
		return
	}
	l.net.CutAll()
	l.serve()
}

// slogOf is a logger that blocks whoever logs while f is frozen: the way
// a test freezes an elector's goroutine (it logs each failed renew)
// while the rest of its process runs, as a starved or stopped goroutine
// would be.
func slogOf(f *testutil.Freeze) *slog.Logger {
	return slog.New(testutil.FreezingHandler(slog.DiscardHandler, f))
}
