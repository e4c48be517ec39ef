package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kwatch/kwatch/internal/bench/report"
	"github.com/kwatch/kwatch/internal/bench/wire"
)

// CtlConfig is one run of the controller scenario: kwatch's controller
// layer against controller-runtime's, each in its own process, on the
// simulator and the same workload.
type CtlConfig struct {
	Mode      string // names the output files ("controller")
	PodCounts []int
	// Runs is how many processes each row gets per pod count; Rounds how
	// many measured rounds each process runs. Rows are interleaved run by
	// run; medians are over every round.
	Runs, Rounds int
	// Workers reconcile at once, in both engines.
	Workers int
	// Rows are the configurations to run.
	Rows []CtlRow
	// Exe, LogDir, Log, ProfileDir and PhaseTimeout are as in Config.
	Exe, LogDir, ProfileDir string
	Log                     io.Writer
	PhaseTimeout            time.Duration
}

// CtlRow is one controller configuration: an engine (engine.CtlEngines)
// and the server it talks to.
type CtlRow struct {
	Name, Engine string
	// Proto rows talk to the protobuf front (list, watch and patches of
	// pods in protobuf; discovery from the simulator) instead of the
	// simulator.
	Proto bool
}

// ControllerRows are the controller scenario's rows.
func ControllerRows() []CtlRow {
	return []CtlRow{
		{Name: "kwatch-controller", Engine: "kwatch-controller"},
		{Name: "controller-runtime", Engine: "controller-runtime"},
		{Name: "controller-runtime-fifo", Engine: "controller-runtime-fifo"},
		{Name: "kwatch-controller-proto", Engine: "kwatch-controller", Proto: true},
		{Name: "controller-runtime-proto", Engine: "controller-runtime", Proto: true},
	}
}

// ControllerTuningRows (-tune) measure what kwatch's Reader.Get costs:
// the same controller reading the informer's store in place, no copy.
func ControllerTuningRows() []CtlRow {
	return []CtlRow{
		{Name: "kwatch-controller-nocopy", Engine: "kwatch-controller-nocopy"},
		{Name: "kwatch-controller-proto-nocopy", Engine: "kwatch-controller-nocopy", Proto: true},
	}
}

// ControllerPairs are the comparisons: kwatch's row first.
func ControllerPairs() [][2]string {
	return [][2]string{
		{"kwatch-controller", "controller-runtime"},
		{"kwatch-controller", "controller-runtime-fifo"},
		{"kwatch-controller-proto", "controller-runtime-proto"},
		{"kwatch-controller-nocopy", "kwatch-controller"},
		{"kwatch-controller-proto-nocopy", "kwatch-controller-proto"},
	}
}

// Controller is the standard controller run.
func Controller() CtlConfig {
	return CtlConfig{Mode: "controller", PodCounts: []int{2000, 10000}, Runs: 3, Rounds: 2, Workers: 4,
		Rows: ControllerRows(), PhaseTimeout: 10 * time.Minute}
}

func (cfg *CtlConfig) logf(format string, args ...any) {
	(&Config{Log: cfg.Log}).logf(format, args...)
}

// RunController runs every row at every pod count and returns the results
// with medians; failed runs are recorded in Results.Failures.
func RunController(ctx context.Context, cfg CtlConfig) (*report.Results, error) {
	if cfg.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cfg.Exe = exe
	}
	if cfg.ProfileDir != "" {
		if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
			return nil, err
		}
	}
	if cfg.LogDir == "" {
		dir, err := os.MkdirTemp("", "kwatch-bench-logs-")
		if err != nil {
			return nil, err
		}
		cfg.LogDir = dir
	}
	start := time.Now()
	res := &report.Results{Mode: cfg.Mode, Started: start.UTC().Format(time.RFC3339),
		GoVersion: runtime.Version(), CPUs: runtime.NumCPU(), Settings: cfg.settings()}
	cfg.logf("engine logs in %s", cfg.LogDir)
	for _, n := range cfg.PodCounts {
		if err := runCtlPodCount(ctx, &cfg, n, res); err != nil {
			return res, err
		}
	}
	res.WallS = time.Since(start).Seconds()
	return res, nil
}

func (cfg *CtlConfig) settings() []string {
	return []string{
		fmt.Sprintf("pods: %v (sim-generated, 3-4 KB of JSON each); %d processes per row, %d measured rounds each, rows interleaved",
			cfg.PodCounts, cfg.Runs, cfg.Rounds),
		fmt.Sprintf("%d workers in both engines; client-side rate limits off (QPS -1) in both; default workqueue rate limiters", cfg.Workers),
		"reconcile: Get the pod from the cache; if fnv32a(name) % 10 == 0 and it lacks this round's mark, a JSON merge patch of two annotations (the round, a reconcile counter)",
		"round: with the engine's watch held, the harness writes every pod once (a new round annotation), then releases the watch; done when every key was reconciled in its final state (the round's write, and the controller's own patch where it patches)",
		"server: the simulator (JSON only) for the plain rows, so both engines get JSON although both ask for protobuf first by default; " +
			"the -proto rows get lists, watches and patch answers in protobuf from the protobuf front (patch bodies are JSON merge patches; both clients ask for protobuf answers first)",
	}
}

func runCtlPodCount(ctx context.Context, cfg *CtlConfig, n int, res *report.Results) error {
	cfg.logf("loading %d pods", n)
	withFront := slices.ContainsFunc(cfg.Rows, func(r CtlRow) bool { return r.Proto })
	srv, err := startServers(n, cfg.Rounds*(n+n/5)+10000, withFront)
	if err != nil {
		return err
	}
	defer srv.close()
	backends, err := ctlBackends(srv)
	if err != nil {
		return err
	}
	rows := map[string]*report.Row{}
	for _, r := range cfg.Rows {
		rows[r.Name] = &report.Row{Name: r.Name, Pods: n}
		res.Rows = append(res.Rows, rows[r.Name])
	}
	for run := range cfg.Runs {
		for _, r := range cfg.Rows {
			if err := ctx.Err(); err != nil {
				return err
			}
			c := &ctlRunner{ctx: ctx, cfg: cfg, name: r.Name, engine: r.Engine, be: backends[r.Proto], pods: n, run: run, row: rows[r.Name]}
			if err := c.runEngine(); err != nil {
				cfg.logf("FAILED %v", err)
				res.Failures = append(res.Failures, err.Error())
				if errors.Is(err, context.Canceled) {
					return err
				}
			}
		}
	}
	for _, r := range rows {
		r.Finish()
	}
	return nil
}

// ctlBackend is a server as the controller scenario sees it.
type ctlBackend struct {
	*backend
	// lastRound is the round every pod on this server carries: a new
	// engine's startup is complete when it has reconciled each in it.
	lastRound string
	// pods reads every pod back from the server.
	pods func() ([]corev1.Pod, error)
}

// ctlBackends are the simulator (false) and, when srv has one, the
// protobuf front (true) serving patches too, with the simulator's
// discovery behind it.
func ctlBackends(srv *servers) (map[bool]*ctlBackend, error) {
	out := map[bool]*ctlBackend{false: {backend: srv.sim, pods: func() ([]corev1.Pod, error) { return listJSON(srv.sim.url) }}}
	f := srv.frontSrv
	if f == nil {
		return out, nil
	}
	be := *srv.front
	be.gate = newGate()
	list, patch, rest := f.Handler(), f.PatchHandler(), srv.simSrv.Handler()
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/api/v1/pods":
			list.ServeHTTP(w, r)
		case r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/"):
			patch.ServeHTTP(w, r)
		default: // discovery
			rest.ServeHTTP(w, r)
		}
	})
	var err error
	if be.url, err = srv.serve(be.gate.wrap(mux)); err != nil {
		return nil, err
	}
	out[true] = &ctlBackend{backend: &be, pods: func() ([]corev1.Pod, error) {
		pods := make([]corev1.Pod, 0, len(srv.pods))
		for _, p := range srv.pods {
			pod, err := f.Pod(p.Namespace + "/" + p.Name)
			if err != nil {
				return nil, err
			}
			pods = append(pods, *pod)
		}
		return pods, nil
	}}
	return out, nil
}

func listJSON(url string) ([]corev1.Pod, error) {
	resp, err := http.Get(url + "/api/v1/pods")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var list corev1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// ctlRunner drives one controller engine process.
type ctlRunner struct {
	ctx          context.Context
	cfg          *CtlConfig
	name, engine string
	be           *ctlBackend
	pods         int
	run          int
	row          *report.Row
	p            *proc
}

func (c *ctlRunner) call(cmd wire.CtlCommand) (wire.CtlReply, error) {
	var r wire.CtlReply
	b, err := json.Marshal(cmd)
	if err != nil {
		return r, err
	}
	if _, err := c.p.in.Write(append(b, '\n')); err != nil {
		return r, fmt.Errorf("harness: send %s: %w", cmd.Op, err)
	}
	if !c.p.out.Scan() {
		return r, fmt.Errorf("harness: no reply to %s (see %s): %w", cmd.Op, c.p.logf.Name(), errOr(c.p.out.Err(), io.ErrUnexpectedEOF))
	}
	if err := json.Unmarshal(c.p.out.Bytes(), &r); err != nil {
		return r, fmt.Errorf("harness: bad reply to %s: %w", cmd.Op, err)
	}
	if r.Err != "" {
		return r, fmt.Errorf("harness: %s: %s", cmd.Op, r.Err)
	}
	return r, nil
}

func (c *ctlRunner) runEngine() error {
	args := []string{"-role=controller", "-engine=" + c.engine, "-host=" + c.be.url, "-workers=" + strconv.Itoa(c.cfg.Workers)}
	logName := fmt.Sprintf("%s-%d-run%d.log", c.name, c.pods, c.run)
	p, err := startProc(c.cfg.Exe, args, nil, c.cfg.LogDir, logName)
	if err != nil {
		return err
	}
	c.p = p
	if err := c.phases(); err != nil {
		c.be.gate.open()
		p.kill()
		return fmt.Errorf("%s at %d pods: %w", c.name, c.pods, err)
	}
	cpu, err := p.finish(30 * time.Second)
	c.row.Add(map[string]float64{"ctl_process_cpu_s": cpu.Seconds()})
	return err
}

func (c *ctlRunner) phases() error {
	timeout := c.cfg.PhaseTimeout.Seconds()
	sync := wire.CtlCommand{Op: "sync", ID: c.be.lastRound, Keys: c.pods, TimeoutSec: timeout}
	if c.cfg.ProfileDir != "" && c.run == 0 {
		sync.Profile = filepath.Join(c.cfg.ProfileDir, fmt.Sprintf("%s-%d-heap.pprof", c.name, c.pods))
	}
	rep, err := c.call(sync)
	if err != nil {
		return err
	}
	s := rep.Sync
	c.row.Add(map[string]float64{
		"ctl_sync_s":          float64(s.DoneNS-s.StartNS) / 1e9,
		"ctl_sync_cpu_s":      float64(s.CPUNS) / 1e9,
		"ctl_sync_reconciles": float64(s.Reconciles),
		"ctl_heap_kb_per_pod": float64(s.HeapAlloc) / float64(c.pods) / 1024,
	})
	time.Sleep(settleTime)
	var last string
	for round := range c.cfg.Rounds {
		if last, err = c.round(round); err != nil {
			return err
		}
	}
	return c.verify(last)
}

// round writes every pod once while the engine's watch is held, releases
// it, and waits for every key to be reconciled in its final state.
func (c *ctlRunner) round(round int) (string, error) {
	id := nextID("round")
	cmd := wire.CtlCommand{Op: "arm", ID: id, Keys: c.pods}
	if c.cfg.ProfileDir != "" && c.run == 0 && round == 0 {
		cmd.Profile = filepath.Join(c.cfg.ProfileDir, fmt.Sprintf("%s-%d-round.pprof", c.name, c.pods))
	}
	if _, err := c.call(cmd); err != nil {
		return id, err
	}
	c.be.gate.close()
	c.be.dropWatches(false)
	if err := waitFor(c.ctx, 10*time.Second, "watches to end", func() bool { return c.be.activeWatches() == 0 }); err != nil {
		return id, err
	}
	for i := range c.pods {
		if err := c.be.update(i, map[string]string{wire.RoundKey: id}); err != nil {
			return id, err
		}
	}
	c.be.lastRound = id
	cpu0 := selfCPU()
	opened := c.be.gate.open()
	rep, err := c.call(wire.CtlCommand{Op: "wait", TimeoutSec: c.cfg.PhaseTimeout.Seconds()})
	if err != nil {
		return id, err
	}
	ph, n := rep.Round, float64(c.pods)
	wall := float64(ph.DoneNS-opened) / 1e9
	c.row.Add(map[string]float64{
		"ctl_pods_per_s":            n / wall,
		"ctl_first_reconcile_ms":    float64(ph.FirstNS-opened) / 1e6,
		"ctl_reconciles_per_s":      float64(ph.Reconciles) / wall,
		"ctl_cpu_us_per_reconcile":  float64(ph.CPUNS) / 1e3 / float64(ph.Reconciles),
		"ctl_cpu_us_per_pod":        float64(ph.CPUNS) / 1e3 / n,
		"ctl_reconciles_per_pod":    float64(ph.Reconciles) / n,
		"ctl_patches":               float64(ph.Patches),
		"ctl_peak_rss_mb":           float64(ph.PeakRSS) / (1 << 20),
		"ctl_server_cpu_us_per_pod": float64(selfCPU()-cpu0) / 1e3 / n,
	})
	c.cfg.logf("%s %d pods run %d round %d: %.0f pods/s, %.0f reconciles/s, %.1f µs CPU/reconcile, %d reconciles, %d patches",
		c.name, c.pods, c.run, round, n/wall, float64(ph.Reconciles)/wall, float64(ph.CPUNS)/1e3/float64(ph.Reconciles), ph.Reconciles, ph.Patches)
	return id, nil
}

// verify reads every pod from the server: each carries the last round, and
// exactly the pods the reconciler patches carry its mark of that round.
func (c *ctlRunner) verify(round string) error {
	pods, err := c.be.pods()
	if err != nil {
		return fmt.Errorf("harness: verify: %w", err)
	}
	if len(pods) != c.pods {
		return fmt.Errorf("harness: verify: server holds %d pods, want %d", len(pods), c.pods)
	}
	patched := 0
	for _, p := range pods {
		ann := p.Annotations
		want := ""
		if wire.Patched(p.Name) {
			want, patched = round, patched+1
		}
		if ann[wire.RoundKey] != round || ann[wire.ReconciledKey] != want {
			return fmt.Errorf("harness: verify: pod %s/%s has round %q, mark %q; want %q, %q",
				p.Namespace, p.Name, ann[wire.RoundKey], ann[wire.ReconciledKey], round, want)
		}
	}
	c.row.Add(map[string]float64{"ctl_patched_pods": float64(patched)})
	return nil
}
