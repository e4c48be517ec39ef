package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/internal/rig/chaosnet"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/queue"
)

// spec is one informer of the soak and the part of the server it mirrors.
type spec struct {
	name      string
	namespace string
	app       string // label selector app=<app>; "" for none
	mode      informer.ListMode
}

var specs = []spec{
	{name: "all/streaming", mode: informer.ListAuto},
	{name: "all/paged", mode: informer.ListPaged},
	{name: "ns-001/paged", namespace: "ns-001", mode: informer.ListPaged},
	{name: "app=web/streaming", app: "web", mode: informer.ListAuto},
}

type engine struct {
	spec
	opts   informer.Options[*pod]
	inf    *informer.Informer[*pod]
	mirror *mirror
	// cancel stops inf; done is closed when its Run has returned.
	cancel context.CancelFunc
	done   chan struct{}
	// past sums the counters of the informers this engine stopped.
	past informer.Stats
	// checkRestore is set by a restart until the next convergence checks
	// what the restarted informer did (run.checkRestores).
	checkRestore bool
}

// run holds one soak's moving parts.
type run struct {
	cfg     Config
	srv     *sim.Server
	proxy   *chaosnet.Proxy
	engines []*engine
	runCtx  context.Context // what the engines run under
	// newClient makes a client to the proxy: one shared by the informers
	// at the start, a new one for each restarted informer.
	newClient func() (*kube.Client, error)
	runner    *queue.Runner[string]
	rng       *rand.Rand
	deck      []int // indexes into faults still to deal this round
	writes    atomic.Int64
	sum       Summary
}

// Run runs a soak and returns its summary; the error says what failed.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	cfg.defaults()
	baseGoroutines := runtime.NumGoroutine()
	r := &run{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 7)), sum: Summary{Faults: map[string]int{}}}
	var err error
	// A small history keeps the in-process server's own memory flat.
	if r.srv, err = sim.New(sim.Options{HistorySize: 2000, BookmarkInterval: 500 * time.Millisecond, Seed: cfg.Seed}); err != nil {
		return r.sum, err
	}
	if cfg.Store == informer.StoreCompact && cfg.SnapshotDir == "" {
		dir, err := os.MkdirTemp("", "kwatch-soak-")
		if err != nil {
			return r.sum, err
		}
		defer os.RemoveAll(dir)
		r.cfg.SnapshotDir = dir
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	stop := func() { cancel(); r.stopEngines(); wg.Wait() }
	proxyAddr, err := r.serve(ctx, &wg)
	if err != nil {
		stop()
		return r.sum, err
	}
	if err := r.build(proxyAddr); err != nil {
		stop()
		return r.sum, err
	}
	if err := r.populate(); err != nil {
		stop()
		return r.sum, err
	}
	r.start(ctx, &wg)
	runErr := r.cycles(ctx)
	if runErr == nil && r.cfg.Store == informer.StoreCompact {
		runErr = r.finalRestart(ctx)
	}
	stop()
	r.sum.GoroutinesBefore = baseGoroutines
	r.sum.GoroutinesAfter = settleGoroutines(baseGoroutines)
	r.finish()
	fmt.Fprint(cfg.Out, r.sum.String())
	if runErr != nil {
		return r.sum, runErr
	}
	return r.sum, r.sum.verdict()
}

// serve starts the server and the proxy in front of it.
func (r *run) serve(ctx context.Context, wg *sync.WaitGroup) (string, error) {
	srvLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	proxyLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srvLn.Close()
		return "", err
	}
	r.proxy = chaosnet.New(srvLn.Addr().String())
	wg.Add(2)
	go func() { defer wg.Done(); _ = r.srv.Serve(ctx, srvLn) }()
	go func() { defer wg.Done(); _ = r.proxy.Serve(ctx, proxyLn) }()
	return proxyLn.Addr().String(), nil
}

func (r *run) build(addr string) error {
	r.newClient = func() (*kube.Client, error) { return kube.NewClient(&kube.Config{Host: "http://" + addr}) }
	c, err := r.newClient()
	if err != nil {
		return err
	}
	var reconciles atomic.Int64
	r.runner, err = queue.NewRunner(queue.RunnerOptions[string]{
		Workers: r.cfg.Workers,
		Reconcile: func(ctx context.Context, key string) (queue.Result, error) {
			reconciles.Add(1)
			return queue.Result{}, nil
		},
	})
	if err != nil {
		return err
	}
	r.sum.reconciles = &reconciles
	for _, s := range specs {
		opts := informer.Options[*pod]{
			Client: c, Resource: kube.Pods, Scope: kube.Scope{Namespace: s.namespace},
			Logger: r.cfg.Logger,
			Tuning: informer.Tuning{ListMode: s.mode, PageSize: 50, Store: r.cfg.Store,
				Backoff:     informer.Backoff{Initial: 50 * time.Millisecond, Max: time.Second},
				IdleTimeout: 2 * time.Second, MinWatchTimeout: 20 * time.Second},
		}
		if s.app != "" {
			opts.Scope.LabelSelector = "app=" + s.app
		}
		if r.cfg.Store == informer.StoreCompact {
			opts.Snapshot = &informer.SnapshotOptions{
				Path:     filepath.Join(r.cfg.SnapshotDir, strings.NewReplacer("/", "-", "=", "-").Replace(s.name)+".snap"),
				Interval: 500 * time.Millisecond, BytesPerSecond: 8 << 20,
			}
		}
		e := &engine{spec: s, opts: opts, mirror: newMirror(r.runner.Add)}
		if err := e.build(); err != nil {
			return err
		}
		r.engines = append(r.engines, e)
	}
	return nil
}

// build makes the engine's informer, with its mirror as the handler.
func (e *engine) build() error {
	inf, err := informer.New(e.opts)
	if err != nil {
		return err
	}
	if _, err := inf.AddHandler(e.mirror, informer.HandlerOptions{}); err != nil {
		return err
	}
	e.inf = inf
	return nil
}

// run starts the engine's informer until ctx ends or stop.
func (e *engine) run(ctx context.Context) {
	ctx, e.cancel = context.WithCancel(ctx)
	e.done = make(chan struct{})
	go func() { defer close(e.done); _ = e.inf.Run(ctx) }()
}

// stop stops the engine's informer and waits for its Run to return (its
// handler calls included); a stopped engine's stop does nothing.
func (e *engine) stop() {
	if e.cancel == nil {
		return
	}
	e.cancel()
	<-e.done
	e.cancel = nil
}

// stats are the counters of every informer the engine ran.
func (e *engine) stats() informer.Stats {
	st := e.inf.Stats()
	addStats(&st, e.past)
	return st
}

func (r *run) start(ctx context.Context, wg *sync.WaitGroup) {
	r.runCtx = ctx
	for _, e := range r.engines {
		e.run(ctx)
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = r.runner.Run(ctx) }()
}

func (r *run) stopEngines() {
	for _, e := range r.engines {
		e.stop()
	}
}

func (r *run) write() error {
	ns := fmt.Sprintf("ns-%03d", r.rng.IntN(r.cfg.Namespaces))
	name := fmt.Sprintf("pod-%d", r.rng.IntN(r.cfg.Pods))
	r.writes.Add(1)
	if r.rng.IntN(10) < 3 {
		_, err := r.srv.Delete("pods", ns, name)
		if err != nil && !isNotFound(err) {
			return fmt.Errorf("delete %s/%s: %w", ns, name, err)
		}
		return nil
	}
	app := []string{"web", "db"}[r.rng.IntN(2)]
	_, err := r.srv.PutPod(sim.Pod{Namespace: ns, Name: name, App: app, NodeName: "node-1", Restarts: int32(r.rng.IntN(1000))})
	return err
}

// populate creates the share of pods the churn keeps in the long run (it
// puts 7 writes in 10 and deletes 3, over the same names), so that the
// stores start at their steady size: the heap check is about growth
// after warm-up, and a compact store keeps whole objects, which would
// otherwise grow for the first cycles of a short run.
func (r *run) populate() error {
	rng := rand.New(rand.NewPCG(r.cfg.Seed, 11))
	for ns := range r.cfg.Namespaces {
		for i := range r.cfg.Pods {
			if rng.IntN(10) >= 7 {
				continue
			}
			app := []string{"web", "db"}[rng.IntN(2)]
			p := sim.Pod{Namespace: fmt.Sprintf("ns-%03d", ns), Name: fmt.Sprintf("pod-%d", i), App: app, NodeName: "node-1"}
			if _, err := r.srv.PutPod(p); err != nil {
				return err
			}
		}
	}
	return nil
}

func isNotFound(err error) bool {
	var se *sim.StatusError
	return errors.As(err, &se) && se.Status.Code == 404
}

// expected is each engine's share of the server's pods: key -> RV.
func (r *run) expected() []map[string]string {
	_, objs, _ := r.srv.Snapshot("pods")
	out := make([]map[string]string, len(r.engines))
	for i := range out {
		out[i] = map[string]string{}
	}
	for _, o := range objs {
		app := appLabel(o.JSON)
		for i, e := range r.engines {
			if (e.namespace == "" || e.namespace == o.Namespace) && (e.app == "" || e.app == app) {
				out[i][o.Namespace+"/"+o.Name] = strconv.FormatUint(o.ResourceVersion, 10)
			}
		}
	}
	return out
}

func appLabel(raw []byte) string {
	var m struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &m)
	return m.Metadata.Labels["app"]
}

func storeState(inf *informer.Informer[*pod]) map[string]string {
	out := map[string]string{}
	for k, p := range inf.Store().Snapshot() {
		out[k] = p.ResourceVersion
	}
	return out
}

func (r *run) sampleHeap() {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.sum.HeapSamples = append(r.sum.HeapSamples, ms.HeapAlloc)
}

func settleGoroutines(base int) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= base || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *run) finish() {
	r.sum.Duration = r.cfg.Duration
	r.sum.Store = r.cfg.Store.String()
	r.sum.Writes = r.writes.Load()
	for _, e := range r.engines {
		st := e.stats()
		r.sum.SnapshotWrites += st.SnapshotWrites
		r.sum.Decodes += st.Decodes
		r.sum.DecodeErrors += st.DecodeErrors
		r.sum.Events += st.Events
		r.sum.Relists += st.Relists
		r.sum.Watches += st.Watches
		r.sum.IdleTimeouts += st.IdleTimeouts
		e.mirror.mu.Lock()
		r.sum.Violations = append(r.sum.Violations, e.mirror.violations...)
		r.sum.Deletes += e.mirror.deletes
		r.sum.Tombstones += e.mirror.tombstones
		e.mirror.mu.Unlock()
	}
	r.sum.Reconciles = r.sum.reconciles.Load()
	r.sum.Fired = kindCounts(r.fired())
}
