package controller_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
)

// A second reader's test of informer.Options.OnApplied (baddf8c), which
// first ran on the informer's watch goroutine with the informer's distMu
// held, so that goroutine waited for expectations.mu holding distMu. And
// expectations.mu was held while calling out: park (and expireLocked)
// asked the metrics.Provider for a Counter under it, while
// Informer.Stats, which RegisterMetrics' functions call at scrape time,
// takes distMu. A Provider that calls its registered functions while
// holding the lock its Counter takes (nothing in metrics.Provider's
// contract forbids it) closed the cycle:
//
//	worker:  expectations.mu (park) -> provider lock (Counter)
//	scrape:  provider lock          -> distMu (Stats)
//	watch:   distMu                 -> expectations.mu (OnApplied)
//
// Both edges are gone now: OnApplied runs once distMu is released
// (8a69b41), and the expectations count and log only outside
// expectations.mu (9309afb). The test builds the interleaving and checks
// that it completes.

// lockingProvider is a metrics.Provider that calls its functions with its
// lock held, as a naive adapter does.
type lockingProvider struct {
	mu  sync.Mutex
	fns []func() float64
	// onWaits, if set, runs (once, without mu) when the expectations ask
	// for their waits counter, which park does with expectations.mu held.
	onWaits atomic.Pointer[func()]
}

func (p *lockingProvider) Counter(name, help string, labels ...metrics.Label) metrics.Counter {
	if name == "kwatch_expectation_waits_total" {
		if f := p.onWaits.Swap(nil); f != nil {
			(*f)()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return metrics.Noop{}.Counter(name, help, labels...)
}

func (p *lockingProvider) Gauge(name, help string, labels ...metrics.Label) metrics.Gauge {
	p.mu.Lock()
	defer p.mu.Unlock()
	return metrics.Noop{}.Gauge(name, help, labels...)
}

func (p *lockingProvider) GaugeFunc(_, _ string, fn func() float64, _ ...metrics.Label) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fns = append(p.fns, fn)
}

func (p *lockingProvider) Histogram(name, help string, buckets []float64, labels ...metrics.Label) metrics.Histogram {
	p.mu.Lock()
	defer p.mu.Unlock()
	return metrics.Noop{}.Histogram(name, help, buckets, labels...)
}

// scrape calls every function with the lock held; holding runs once the
// lock is taken.
func (p *lockingProvider) scrape(holding func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	holding()
	for _, fn := range p.fns {
		fn()
	}
}

// heldWatches serves h with the bytes of every watch response written
// while held passed on only once released.
type heldWatches struct {
	h    http.Handler
	mu   sync.Mutex
	open chan struct{} // closed while not held
}

func newHeldWatches(h http.Handler) *heldWatches {
	open := make(chan struct{})
	close(open)
	return &heldWatches{h: h, open: open}
}

func (g *heldWatches) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
}

func (g *heldWatches) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

func (g *heldWatches) gate() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

func (g *heldWatches) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	heldBy(g.h, g.gate).ServeHTTP(w, r)
}

// TestReviewOnAppliedLockCycleWithLockingProvider: a reconcile writes
// ConfigMap "target" and is queued again before the cache shows the
// write, so it parks, asking the provider for its waits counter with
// expectations.mu held. Meanwhile the cache applies the write's event (its
// watch goroutine holding distMu) and a scrape holds the provider's lock
// and reads the cache's Stats. The parked key must be reconciled again
// and the scrape must end.
func TestReviewOnAppliedLockCycleWithLockingProvider(t *testing.T) {
	srv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	require.NoError(t, srv.EnsureNamespace("demo"))
	held := newHeldWatches(srv.Handler())
	var mn testutil.MemNet
	ln, err := mn.Listen("api:80")
	require.NoError(t, err)
	hs := &http.Server{Handler: held}
	go func() { _ = hs.Serve(ln) }()
	tr := mn.Transport()
	c, err := kube.NewClient(&kube.Config{Host: "http://api:80", HTTP: kube.HTTPConfig{Transport: tr}, RateLimit: kube.RateLimitConfig{QPS: -1}})
	require.NoError(t, err)

	p := &lockingProvider{}
	m, err := controller.NewManager(c, controller.ManagerOptions{Namespace: "demo", Logger: quiet(), Metrics: p})
	require.NoError(t, err)
	cmType := kube.Typed[*Obj](kube.ConfigMaps)

	// The index function runs on the cache's watch goroutine with distMu
	// held, just before the store takes the object: it tells when the
	// write's event is being applied.
	var wantRV atomic.Pointer[string]
	applying := make(chan struct{})
	var applyingOnce sync.Once
	require.NoError(t, controller.IndexIn(m, cmType, kube.Scope{}, "review-hook", func(o *Obj) ([]string, error) {
		if rv := wantRV.Load(); rv != nil && o.Name == "target" && o.ResourceVersion == *rv {
			applyingOnce.Do(func() { close(applying) })
		}
		return nil, nil
	}))
	_, err = controller.CacheIn(m, cmType, kube.Scope{})
	require.NoError(t, err)

	cms := client.For(m.Client(), cmType, client.Options{})
	var runs atomic.Int64
	wrote, again := make(chan struct{}), make(chan struct{})
	ctl, err := controller.New(m, controller.Config[*Obj]{Name: "writer", For: cmType,
		ForScope: kube.Scope{LabelSelector: "role=trigger"},
		Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
			switch runs.Add(1) {
			case 1:
				held.hold() // the cache does not show the write until released
				obj, err := cms.Patch(ctx, "demo", "target", client.MergePatch, []byte(`{"data":{"a":"1"}}`), client.PatchOptions{})
				if err != nil {
					return controller.Result{}, err
				}
				rv := obj.ResourceVersion
				wantRV.Store(&rv)
				close(wrote)
			case 2:
				close(again)
			}
			return controller.Result{}, nil
		}})
	require.NoError(t, err)
	_, err = srv.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"target"}}`))
	require.NoError(t, err)
	_, err = srv.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"trigger","labels":{"role":"trigger"}}}`))
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- m.Run(ctx) }()
	deadlocked := false
	t.Cleanup(func() {
		cancel()
		held.release()
		if deadlocked {
			return // Run cannot return: its informer's goroutine is stuck
		}
		require.NoError(t, <-runDone)
		tr.CloseIdleConnections()
		_ = hs.Close()
	})

	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(waitLong):
			t.Fatalf("timed out waiting for %s", what)
		}
	}
	wait(wrote, "the first reconcile's write")

	// Queue the key again: it parks (the cache does not show the write)
	// and asks for the waits counter with expectations.mu held. There,
	// let the write's event through and a scrape take the provider's lock
	// once the watch goroutine is applying it.
	scrapeDone := make(chan struct{})
	// (It runs on the worker's goroutine: t.Error, not t.Fatal.)
	onWaits := func() {
		held.release()
		select {
		case <-applying:
		case <-time.After(waitLong):
			t.Error("timed out waiting for the cache to apply the write's event")
			return
		}
		holding := make(chan struct{})
		go func() {
			defer close(scrapeDone)
			p.scrape(func() { close(holding) })
		}()
		<-holding
	}
	p.onWaits.Store(&onWaits)
	ctl.Enqueue(controller.Key{Namespace: "demo", Name: "trigger"})

	const bound = 10 * time.Second // far below the expectation bound (30 s), far above a healthy run
	timeout := time.After(bound)
	for _, ch := range []struct {
		ch   <-chan struct{}
		what string
	}{{again, "the parked key's next reconcile"}, {scrapeDone, "the scrape"}} {
		select {
		case <-ch.ch:
		case <-timeout:
			deadlocked = true
			t.Fatalf("%s did not come within %v: the parked worker holds expectations.mu and waits for the provider's lock, "+
				"the scrape holds that lock and waits for the informer's distMu (Stats), and the watch goroutine holds distMu "+
				"and waits for expectations.mu (OnApplied -> observed)", ch.what, bound)
		}
	}
}
