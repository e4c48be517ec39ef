package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/trace"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kwatch/kwatch/internal/bench/report"
	"github.com/kwatch/kwatch/internal/bench/wire"
)

// engineRun is everything one engine process measured, as metric values.
type engineRun struct {
	metrics map[string]float64
	latency []int32 // µs, every stamped delivery
}

var phaseSeq atomic.Int64

// selfCPU is the user+sys CPU of the harness process (the servers) so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func nextID(phase string) string {
	return phase + "-" + strconv.FormatInt(phaseSeq.Add(1), 10)
}

// runner drives one engine process through the scenarios.
type runner struct {
	cfg     *Config
	row     Row
	be      *backend
	p       *proc
	pods    int
	profile string // path prefix for CPU profiles, or ""
	trace   string // path prefix for runtime traces, or ""
	out     engineRun
}

// setGC records the GC's share of a phase's span under prefix, of the
// process's CPU capacity (GOMAXPROCS × wall) and of the CPU it used, in
// percent, over the GC cycles that ended in the span; and their number.
func (r *runner) setGC(prefix string, gc *report.GCCPU) {
	if gc == nil {
		return
	}
	r.set(prefix+"_gc_share_pct", 100*gc.Share())
	r.set(prefix+"_gc_busy_pct", 100*gc.BusyShare())
	r.set(prefix+"_gc_cycles", gc.Cycles)
}

// startTrace traces the harness process (the servers) during phase when
// the run asks for it; the returned func stops the trace.
func (r *runner) startTrace(phase string) (stop func(), err error) {
	if r.trace == "" || !slices.Contains(r.cfg.tracePhases(), phase) {
		return func() {}, nil
	}
	f, err := os.Create(r.trace + "-" + phase + "-harness.trace")
	if err != nil {
		return nil, err
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, err
	}
	return sync.OnceFunc(func() {
		trace.Stop()
		f.Close()
	}), nil
}

func (r *runner) timeoutSec() float64 { return r.cfg.PhaseTimeout.Seconds() }

func (r *runner) profilePath(phase string) string {
	if r.profile == "" {
		return ""
	}
	return r.profile + "-" + phase + ".pprof"
}

func (r *runner) set(metric string, v float64) { r.out.metrics[metric] = v }

// syncPhase starts the informer and records the initial sync.
func (r *runner) syncPhase() error {
	rep, err := r.p.call(wire.Command{Op: "sync", Profile: r.profilePath("sync"), TimeoutSec: r.timeoutSec()})
	if err != nil {
		return err
	}
	s := rep.Sync
	if s.Objects != r.pods {
		return fmt.Errorf("harness: %s synced %d objects, want %d", r.row.Name, s.Objects, r.pods)
	}
	r.set("sync_wall_s", float64(s.WallNS)/1e9)
	r.set("sync_handlers_s", float64(s.HandlersNS)/1e9)
	r.set("sync_cpu_s", float64(s.CPUNS)/1e9)
	r.set("sync_peak_rss_mb", float64(s.PeakRSS)/(1<<20))
	r.set("heap_kb_per_pod", float64(s.HeapAlloc)/float64(s.Objects)/1024)
	r.setGC("sync", rep.GC)
	return nil
}

// hold closes the gate and drops the engine's watch; the engine's next
// request waits at the gate until release.
func (r *runner) hold(ctx context.Context) error {
	r.be.gate.close()
	r.be.dropWatches(false)
	return waitFor(ctx, 10*time.Second, "watches to end", func() bool { return r.be.activeWatches() == 0 })
}

func (r *runner) arm(phase, id string, profile bool) error {
	c := wire.Command{Op: "arm", Phase: phase, ID: id}
	if profile {
		c.Profile = r.profilePath(phase)
	}
	_, err := r.p.call(c)
	return err
}

func (r *runner) wait() (*wire.PhaseResult, *report.GCCPU, error) {
	rep, err := r.p.call(wire.Command{Op: "wait", TimeoutSec: r.timeoutSec()})
	if err != nil {
		return nil, nil, err
	}
	return rep.Phase, rep.GC, nil
}

// throughput writes every event while the engine cannot read, then lets
// the engine's resumed watch take them all from the server's history as
// fast as it can read: the server only copies stored bytes, so the rate is
// the engine's.
func (r *runner) throughput(ctx context.Context) error {
	n, id := r.cfg.ThroughputEvents, nextID(wire.PhaseThroughput)
	if err := r.arm(wire.PhaseThroughput, id, true); err != nil {
		return err
	}
	if err := r.hold(ctx); err != nil {
		return err
	}
	for i := range n {
		extra := map[string]string{wire.SeqKey: strconv.Itoa(i)}
		if i == n-1 {
			extra[wire.DoneKey] = id
		}
		if err := r.be.update(i, extra); err != nil {
			return err
		}
	}
	cpu0 := selfCPU()
	opened := r.be.gate.open()
	res, gc, err := r.wait()
	if err != nil {
		return err
	}
	r.setGC("tput", gc)
	r.set("tput_server_cpu_us_per_event", float64(selfCPU()-cpu0)/1e3/float64(n))
	r.set("tput_events_per_s", float64(n)/(float64(res.DoneNS-opened)/1e9))
	r.set("tput_cpu_us_per_event", float64(res.CPUNS)/1e3/float64(n))
	r.set("tput_handler_calls", float64(res.Calls))
	return nil
}

// latency writes at a fixed rate, each write stamped with the time just
// before it, and collects the engine's write-to-handler latencies.
func (r *runner) latency(ctx context.Context) error {
	n, id := r.cfg.LatencyEvents, nextID(wire.PhaseLatency)
	// The harness, which hosts the servers, collects the throughput
	// phase's garbage first: otherwise a cycle of its own may fall in one
	// row's window and not another's. The engine's cycles are its own, and
	// part of what is measured.
	runtime.GC()
	if err := r.arm(wire.PhaseLatency, id, true); err != nil {
		return err
	}
	stopTrace, err := r.startTrace(wire.PhaseLatency)
	if err != nil {
		return err
	}
	defer stopTrace()
	interval := time.Duration(float64(time.Second) / r.cfg.LatencyRate)
	start := time.Now()
	for i := range n {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		extra := map[string]string{wire.StampKey: strconv.FormatInt(time.Now().UnixNano(), 10)}
		if i == n-1 {
			extra[wire.DoneKey] = id
		}
		// Offset from the throughput writes so no pod is reused back to back.
		if err := r.be.update(i+r.pods/2, extra); err != nil {
			return err
		}
	}
	res, gc, err := r.wait()
	if err != nil {
		return err
	}
	stopTrace()
	r.setGC("lat", gc)
	if len(res.LatencyUS) == 0 {
		return fmt.Errorf("harness: %s delivered no stamped event", r.row.Name)
	}
	r.out.latency = res.LatencyUS
	for _, q := range []struct {
		name string
		q    float64
	}{{"lat_p50_ms", 0.50}, {"lat_p99_ms", 0.99}, {"lat_p999_ms", 0.999}} {
		r.set(q.name, float64(report.Quantile(res.LatencyUS, q.q))/1e3)
	}
	r.set("lat_delivered", float64(len(res.LatencyUS))/float64(n))
	return nil
}

// relist makes the engine's resourceVersion too old (the server loses its
// history, as after a restart) so that it must relist, and times the
// relist until its last handler call.
func (r *runner) relist(ctx context.Context) error {
	id := nextID(wire.PhaseRelist)
	if err := r.arm(wire.PhaseRelist, id, false); err != nil {
		return err
	}
	if err := r.hold(ctx); err != nil {
		return err
	}
	// The marker is newer than anything the engine saw; losing the history
	// after it makes the engine's resume point older than the server's floor.
	if err := r.be.update(0, map[string]string{wire.DoneKey: id}); err != nil {
		return err
	}
	r.be.dropWatches(true)
	opened := r.be.gate.open()
	res, gc, err := r.wait()
	if err != nil {
		return err
	}
	r.setGC("relist", gc)
	r.set("relist_total_s", float64(res.DoneNS-opened)/1e9)
	if first := r.be.gate.firstListNS(); first > 0 {
		r.set("relist_list_s", float64(res.DoneNS-first)/1e9)
	}
	r.set("relist_cpu_s", float64(res.CPUNS)/1e9)
	r.set("relist_peak_rss_mb", float64(res.PeakRSS)/(1<<20))
	return nil
}

// settleTime separates the sync from the first dropped watch: client-go
// treats a watch that ends within its first second with no event as broken
// and relists instead of resuming.
const settleTime = 1500 * time.Millisecond

func settle() error {
	time.Sleep(settleTime)
	return nil
}

// runEngine runs every scenario of row against be in one engine process.
func runEngine(ctx context.Context, cfg *Config, row Row, be *backend, pods, run int) (engineRun, error) {
	logName := fmt.Sprintf("%s-%d-run%d.log", row.Name, pods, run)
	tracePrefix := cfg.tracePrefix(fmt.Sprintf("%s-%d", row.Name, pods), run)
	p, err := startProc(cfg.Exe, engineArgs(cfg, row, be.url, tracePrefix),
		append(slices.Clone(cfg.EngineEnv), row.Env...), cfg.LogDir, logName)
	if err != nil {
		return engineRun{}, err
	}
	r := &runner{cfg: cfg, row: row, be: be, p: p, pods: pods, trace: tracePrefix, out: engineRun{metrics: map[string]float64{}}}
	if cfg.ProfileDir != "" && run == 0 {
		r.profile = filepath.Join(cfg.ProfileDir, fmt.Sprintf("%s-%d", row.Name, pods))
	}
	steps := []func() error{r.syncPhase, settle}
	switch {
	case row.ThroughputOnly:
		steps = append(steps, func() error { return r.throughput(ctx) })
	case row.SyncOnly:
		steps = append(steps, func() error { return r.relist(ctx) })
	default:
		steps = append(steps, func() error { return r.throughput(ctx) }, func() error { return r.latency(ctx) },
			func() error { return r.relist(ctx) })
	}
	for _, step := range steps {
		if err := step(); err != nil {
			be.gate.open()
			p.kill()
			return r.out, fmt.Errorf("%s at %d pods: %w", row.Name, pods, err)
		}
	}
	cpu, err := p.finish(30 * time.Second)
	r.set("process_cpu_s", cpu.Seconds())
	return r.out, err
}
