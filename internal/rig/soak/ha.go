package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
	"github.com/kwatch/kwatch/shard"
)

// HASetup is one setup of the HA soak.
type HASetup string

// The HA soak's setups: three managers under leader election, or three
// sharded replicas of one ring in Filter or Label mode.
const (
	HALeader      HASetup = "leader"
	HAShardFilter HASetup = "shard-filter"
	HAShardLabel  HASetup = "shard-label"
)

// HASetups are every setup, in the order RunHA reports them.
var HASetups = []HASetup{HALeader, HAShardFilter, HAShardLabel}

// HAConfig shapes an HA soak run. Zero fields take the defaults given.
// The Lease timings are always the defaults (leader.DefaultLeaseDuration
// and the rest): the soak is the safety claim's evidence.
type HAConfig struct {
	Duration time.Duration // of the chaos, per setup (they run at once); 1 minute
	Setups   []HASetup     // HASetups
	Keys     int           // ConfigMaps reconciled; 24
	Seed     uint64        // 1
	Out      io.Writer     // progress and the summary; nil discards them
}

func (c *HAConfig) defaults() {
	if c.Duration <= 0 {
		c.Duration = time.Minute
	}
	if len(c.Setups) == 0 {
		c.Setups = HASetups
	}
	if c.Keys <= 0 {
		c.Keys = 24
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
}

// RunHA runs the HA soak: each setup on a simulated server of its own,
// all at once, for cfg.Duration of faults, then a quiet period in which
// every key must be reconciled again. It prints and returns the
// summary; the error says what failed: an overlap, a write after a loss
// of the right to act, a key nobody reconciled once the faults ended,
// or a fault kind scheduled that never fired.
func RunHA(ctx context.Context, cfg HAConfig) (HASummary, error) {
	cfg.defaults()
	sums := make([]HASetupSummary, len(cfg.Setups))
	errs := make([]error, len(cfg.Setups))
	var wg sync.WaitGroup
	for i, s := range cfg.Setups {
		wg.Go(func() {
			sums[i], errs[i] = runSetup(ctx, cfg, s, cfg.Seed+uint64(i))
		})
	}
	wg.Wait()
	sum := HASummary{Duration: cfg.Duration, Setups: sums}
	fmt.Fprint(cfg.Out, sum.String())
	if err := errors.Join(errs...); err != nil {
		return sum, err
	}
	return sum, sum.verdict()
}

// haMode is one setup's run.
type haMode struct {
	cfg   HAConfig
	setup HASetup
	srv   *sim.Server
	rec   *haRecord
	keys  []string
	rng   *rand.Rand // the chaos loop's only
	wg    sync.WaitGroup
	slots []*haSlot

	leaseMu    sync.Mutex
	leaseNames map[string]bool // every Lease seen; guarded by leaseMu

	mu      sync.Mutex
	links   []*haLink // every process's, for the counts; guarded by mu
	fenced  atomic.Int64
	ignored atomic.Int64     // reconciles that ignored their context
	fired   map[string]int64 // the HA faults that fired, by kind; guarded by mu
	sched   map[string]int   // faults scheduled, by name; guarded by mu
}

const haNS = "demo"

func runSetup(ctx context.Context, cfg HAConfig, setup HASetup, seed uint64) (HASetupSummary, error) {
	srv, err := sim.New(sim.Options{HistorySize: 5000, BookmarkInterval: time.Second, Seed: seed})
	if err != nil {
		return HASetupSummary{}, err
	}
	if err := srv.EnsureNamespace(haNS); err != nil {
		return HASetupSummary{}, err
	}
	r := &haMode{cfg: cfg, setup: setup, srv: srv, rec: newHARecord(), rng: rand.New(rand.NewPCG(seed, 23)),
		leaseNames: map[string]bool{}, fired: map[string]int64{}, sched: map[string]int{}}
	for i := range cfg.Keys {
		name := fmt.Sprintf("cm-%02d", i)
		if _, err := srv.Create("configmaps", fmt.Appendf(nil, `{"metadata":{"namespace":%q,"name":%q},"data":{"v":"0"}}`, haNS, name)); err != nil {
			return HASetupSummary{}, err
		}
		r.keys = append(r.keys, haNS+"/"+name)
	}
	runCtx, stop := context.WithCancel(ctx)
	for i := range 3 {
		s := &haSlot{n: i, run: r, rng: rand.New(rand.NewPCG(seed, uint64(100+i)))}
		r.slots = append(r.slots, s)
		s.start(runCtx)
	}
	r.wg.Go(func() { r.churn(runCtx) })
	chaosErr := r.chaos(runCtx)
	orphans := r.quiet(runCtx)
	for _, s := range r.slots {
		s.stop()
	}
	stop()
	r.wg.Wait()
	return r.summary(orphans), chaosErr
}

// churn changes a random ConfigMap on the server every 200 ms, so the
// replicas have work besides their own writes and requeues.
func (r *haMode) churn(ctx context.Context) {
	rng := rand.New(rand.NewPCG(r.cfg.Seed, 31))
	tk := time.NewTicker(200 * time.Millisecond)
	defer tk.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		k := r.keys[rng.IntN(len(r.keys))]
		ns, name, _ := strings.Cut(k, "/")
		_, _ = r.srv.Patch("configmaps", ns, name, fmt.Appendf(nil, `{"data":{"v":"%d"}}`, n))
	}
}

// leaseOf is the Lease that gives proc the right to act, for the
// post-loss check: the election Lease, or the member's own.
func (r *haMode) leaseOf(proc string) string {
	if r.setup == HALeader {
		return haNS + "/managers"
	}
	return haNS + "/" + shard.LeaseName("cms", proc)
}

// cm is a ConfigMap as far as the soak needs it.
type cm struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Data              map[string]string `json:"data,omitempty"`
}

// newManager builds process proc's manager and controller.
func (r *haMode) newManager(kc *kube.Client, proc string, p *testutil.Freeze, rng *lockedRand) (*controller.Manager, error) {
	logger := slog.New(testutil.FreezingHandler(slog.DiscardHandler, p))
	opts := controller.ManagerOptions{Logger: slog.New(slog.DiscardHandler), Namespace: haNS}
	switch r.setup {
	case HALeader:
		opts.LeaderElection = &leader.Config{Namespace: haNS, Name: "managers", Identity: proc, Logger: logger}
	case HAShardFilter, HAShardLabel:
		mode := shard.Filter
		if r.setup == HAShardLabel {
			mode = shard.Label
		}
		opts.Sharding = &shard.Config{Namespace: haNS, Ring: "cms", Identity: proc, Mode: mode, Logger: logger}
	}
	m, err := controller.NewManager(kc, opts)
	if err != nil {
		return nil, err
	}
	cms := client.For(m.Client(), haConfigMaps, client.Options{})
	_, err = controller.New(m, controller.Config[*cm]{Name: "cms", For: haConfigMaps, Workers: 4,
		Reconcile: r.reconciler(proc, p, rng, cms)})
	return m, err
}

// haConfigMaps is the ConfigMaps the HA setups reconcile, as cm.
var haConfigMaps = kube.Typed[*cm](kube.ConfigMaps)

// reconciler writes the key's annotation "by" through the manager's
// fenced client, then either waits honouring its context and writes
// again, or (every other time) sleeps ignoring its context and writes
// again with and without the key, as a careless reconciler would. While
// its process is frozen it blocks at its start and before each write.
//
// The record dates the reconcile from its call, when the gate let it
// in, not from the end of a freeze that held it at its start: its
// context may be cancelled during the freeze (the renew deadline) and
// the key's next owner start meanwhile, and a start dated from the thaw
// would be a zero-length span inside the next owner's, an overlap that
// never was.
func (r *haMode) reconciler(proc string, p *testutil.Freeze, rng *lockedRand, cms *client.Client[*cm]) controller.Reconciler {
	touch := func(ctx context.Context, key controller.Key) error {
		p.Wait()
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"by":%q}}}`, proc)
		_, err := cms.Patch(ctx, key.Namespace, key.Name, client.MergePatch, []byte(patch), client.PatchOptions{})
		if kube.IsFenced(err) {
			r.fenced.Add(1)
			return nil
		}
		return err
	}
	return func(ctx context.Context, key controller.Key) (controller.Result, error) {
		end := r.rec.begin(ctx, proc, key.String())
		defer end()
		p.Wait()
		if err := touch(ctx, key); err != nil && ctx.Err() == nil {
			return controller.Result{}, err
		}
		d := time.Duration(rng.int64N(int64(12 * time.Second)))
		if rng.int64N(2) == 0 {
			select {
			case <-ctx.Done():
				return controller.Result{}, nil
			case <-time.After(d / 4):
			}
			_ = touch(ctx, key)
		} else {
			r.ignored.Add(1)
			time.Sleep(d) // ignores ctx
			_ = touch(context.WithoutCancel(ctx), key)
			_ = touch(context.Background(), key)
		}
		return controller.Result{RequeueAfter: time.Second + time.Duration(rng.int64N(int64(4*time.Second)))}, nil
	}
}

// lockedRand is a rand.Rand shared by a process's workers.
type lockedRand struct {
	mu  sync.Mutex
	rng *rand.Rand
}

func (l *lockedRand) int64N(n int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rng.Int64N(n)
}
