package shard

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/memcluster"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/kube"
)

// These helpers run one simulated API server and several members inside
// a testing/synctest bubble. Each member reaches the server over its own
// link (memcluster), so a test can cut one member off while the others go on.

const testNS = "demo"

type cluster struct {
	*memcluster.Cluster
	t   *testing.T
	srv *sim.Server
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	mc := memcluster.New(t)
	return &cluster{Cluster: mc, t: t, srv: mc.Server}
}

// link is one member's network path to the server.
type link struct {
	*memcluster.Link
	// lose, while positive, has the server apply that many more Lease
	// updates but the response never reach the member.
	lose atomic.Int32
}

func (c *cluster) connect(name string) (*kube.Client, *link) {
	kc, ml := c.Connect(name)
	l := &link{Link: ml}
	ml.SetIntercept(func(w http.ResponseWriter, r *http.Request, next http.Handler) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/leases/") && l.lose.Add(-1) >= 0 {
			next.ServeHTTP(httptest.NewRecorder(), r) // applied...
			panic(http.ErrAbortHandler)               // ...but the answer is lost
		}
		next.ServeHTTP(w, r)
	})
	return kc, l
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testMember is a running Member.
type testMember struct {
	m      *Member
	link   *link
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

func testConfig(c *kube.Client, id string) Config {
	return Config{Client: c, Namespace: testNS, Ring: "r", Identity: id, Logger: quiet()}
}

// run starts member id; the test ends it with stop (or at cleanup).
func (c *cluster) run(id string, adjust func(*Config)) *testMember {
	t := c.t
	t.Helper()
	kc, l := c.connect(id)
	cfg := testConfig(kc, id)
	if adjust != nil {
		adjust(&cfg)
	}
	m, err := New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	tm := &testMember{m: m, link: l, cancel: cancel, done: make(chan error, 1)}
	go func() { tm.done <- m.Run(ctx, func(ctx context.Context) { <-ctx.Done() }) }()
	t.Cleanup(func() { _ = tm.stop() })
	return tm
}

// stop cancels the member and returns Run's error.
func (tm *testMember) stop() error {
	tm.once.Do(func() {
		tm.cancel()
		tm.err = <-tm.done
	})
	return tm.err
}

// owners counts, for each key, the members whose Owns is true.
func owners(members []*testMember, keys []string) map[string][]string {
	out := map[string][]string{}
	for _, k := range keys {
		for _, tm := range members {
			if tm.m.Owns(k) {
				out[k] = append(out[k], tm.m.Identity())
			}
		}
	}
	return out
}

// watchOverlap checks every step of fake time, until stop, that no key
// is owned by two members at once, and records when each key was owned
// by nobody.
type overlapWatch struct {
	mu       sync.Mutex
	overlaps []string
}

func (c *cluster) watchOverlap(members func() []*testMember, keys []string, step time.Duration) (*overlapWatch, func()) {
	w := &overlapWatch{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(step)
		defer tk.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
			for k, os := range owners(members(), keys) {
				if len(os) > 1 {
					w.mu.Lock()
					w.overlaps = append(w.overlaps, time.Now().String()+" "+k+" "+joined(os))
					w.mu.Unlock()
				}
			}
		}
	}()
	return w, func() { cancel(); <-done }
}

func joined(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}

func newTestClient(t *testing.T) *kube.Client {
	c, err := kube.NewClient(&kube.Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	return c
}
