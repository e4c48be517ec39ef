package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"sync"
	"time"

	"github.com/kwatch/kwatch/internal/bench/report"
	"github.com/kwatch/kwatch/internal/bench/wire"
)

// quietFor is how long a relist's burst of handler calls must have been
// over before the relist counts as delivered.
const quietFor = 100 * time.Millisecond

// Serve runs the engine cfg names, answering the harness's commands read
// from in with replies written to out, until "exit" or the end of in. It
// returns after the informer's goroutines have all exited.
func Serve(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	p := &probe{gcAfter: cfg.LatencyGCAfter}
	e, err := newEngine(cfg, p)
	if err != nil {
		return err
	}
	ctl := &control{e: e, p: p, cfg: cfg}
	runCtx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		ctl.wg.Wait()
	}()
	ctl.runCtx = runCtx
	sc := bufio.NewScanner(in)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var cmd wire.Command
		if err := json.Unmarshal(sc.Bytes(), &cmd); err != nil {
			return fmt.Errorf("engine: bad command %q: %w", sc.Text(), err)
		}
		if cmd.Op == "exit" {
			cancel()
			ctl.wg.Wait()
			return enc.Encode(wire.Reply{})
		}
		if err := enc.Encode(ctl.handle(ctx, cmd)); err != nil {
			return err
		}
	}
	return sc.Err()
}

// reply is wire.Reply with the GC's CPU over the measured span beside it.
type reply struct {
	wire.Reply
	report.GCReply
}

// control holds one engine process's state between commands.
type control struct {
	e      informerEngine
	p      *probe
	cfg    Config
	runCtx context.Context
	wg     sync.WaitGroup
	armed  *phase
	armCPU time.Duration
	armGC  report.GCCPU
	prof   *os.File
	trace  *os.File
}

func (c *control) handle(ctx context.Context, cmd wire.Command) reply {
	timeout := time.Duration(cmd.TimeoutSec * float64(time.Second))
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var r reply
	var err error
	switch cmd.Op {
	case "sync":
		r.Sync, r.GC, err = c.sync(ctx, cmd.Profile)
	case "arm":
		err = c.arm(cmd)
	case "wait":
		r.Phase, r.GC, err = c.wait(ctx)
	default:
		err = fmt.Errorf("engine: unknown op %q", cmd.Op)
	}
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

// sync starts the informer and waits until it has synced and the handler
// has every initial add. The GC span is the same, before the forced GCs
// that measure the live heap.
func (c *control) sync(ctx context.Context, profile string) (*wire.SyncResult, *report.GCCPU, error) {
	if err := c.startProfile(profile); err != nil {
		return nil, nil, err
	}
	defer c.stopProfile()
	if err := c.startTrace(PhaseSync); err != nil {
		return nil, nil, err
	}
	defer c.stopTrace()
	mark("sync start")
	start, cpu0, gc0 := time.Now(), cpuTime(), readGCCPU()
	c.wg.Go(func() {
		if err := c.e.run(c.runCtx); err != nil {
			fmt.Fprintln(os.Stderr, "engine run:", err)
		}
	})
	if err := poll(ctx, c.e.synced); err != nil {
		return nil, nil, fmt.Errorf("engine: not synced: %w", err)
	}
	res := &wire.SyncResult{WallNS: int64(time.Since(start)), CPUNS: int64(cpuTime() - cpu0), PeakRSS: peakRSS()}
	res.Objects = c.e.len()
	if err := poll(ctx, func() bool { return c.p.adds.Load() >= int64(res.Objects) }); err != nil {
		return nil, nil, fmt.Errorf("engine: handler got %d of %d adds: %w", c.p.adds.Load(), res.Objects, err)
	}
	res.HandlersNS = int64(time.Since(start))
	gc := readGCCPU().Sub(gc0)
	mark("sync done")
	c.stopTrace()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.HeapAlloc = int64(ms.HeapAlloc)
	return res, &gc, nil
}

func (c *control) arm(cmd wire.Command) error {
	if c.armed != nil {
		return errors.New("engine: a phase is already armed")
	}
	if err := c.startProfile(cmd.Profile); err != nil {
		return err
	}
	if err := c.startTrace(cmd.Phase); err != nil {
		c.stopProfile()
		return err
	}
	ph := newPhase(cmd.Phase, cmd.ID)
	if ph.name == wire.PhaseRelist {
		if err := resetPeakRSS(); err != nil {
			return fmt.Errorf("engine: reset peak RSS: %w", err)
		}
	}
	mark("%s armed", ph.name)
	c.armed, c.armCPU, c.armGC = ph, cpuTime(), readGCCPU()
	c.p.cur.Store(ph)
	return nil
}

// wait blocks until the armed phase's marker was delivered. The CPU and GC
// spans are the phase's: first to marker delivery for the throughput and
// latency phases, arm to the end of the burst for a relist.
func (c *control) wait(ctx context.Context) (*wire.PhaseResult, *report.GCCPU, error) {
	ph := c.armed
	if ph == nil {
		return nil, nil, errors.New("engine: wait without arm")
	}
	c.armed = nil
	defer c.stopProfile()
	defer c.stopTrace()
	defer c.p.cur.CompareAndSwap(ph, nil)
	select {
	case <-ph.done:
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("engine: %s phase saw %d calls, no marker: %w", ph.name, ph.calls.Load(), ctx.Err())
	}
	res := &wire.PhaseResult{FirstNS: ph.firstNS, DoneNS: ph.doneNS, LatencyUS: ph.latencyUS}
	cpuFrom, cpuTo := ph.firstCPU, ph.doneCPU
	gcFrom, gcTo := ph.firstGC, ph.doneGC
	if ph.keep {
		if err := poll(ctx, func() bool { return time.Since(time.Unix(0, c.p.lastCall.Load())) > quietFor }); err != nil {
			return nil, nil, err
		}
		res.DoneNS = max(res.DoneNS, c.p.lastCall.Load())
		cpuFrom, cpuTo = c.armCPU, cpuTime()
		gcFrom, gcTo = c.armGC, readGCCPU()
	}
	mark("%s done", ph.name)
	res.CPUNS = int64(cpuTo - cpuFrom)
	res.Calls = ph.calls.Load()
	res.PeakRSS = peakRSS()
	gc := gcTo.Sub(gcFrom)
	return res, &gc, nil
}

// poll checks cond every millisecond until it holds or ctx ends. Both
// engines are waited for the same way, so neither gets a coarser clock.
func poll(ctx context.Context, cond func() bool) error {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

func (c *control) startProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return err
	}
	c.prof = f
	return nil
}

// startTrace starts a runtime/trace of phase when the engine was asked to
// trace it (Config.TracePrefix, Config.TracePhases), to
// <prefix>-<phase>.trace.
func (c *control) startTrace(phase string) error {
	if c.cfg.TracePrefix == "" || !slices.Contains(c.cfg.TracePhases, phase) || c.trace != nil {
		return nil
	}
	f, err := os.Create(c.cfg.TracePrefix + "-" + phase + ".trace")
	if err != nil {
		return err
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return err
	}
	c.trace = f
	return nil
}

func (c *control) stopTrace() {
	if c.trace == nil {
		return
	}
	trace.Stop()
	c.trace.Close()
	c.trace = nil
}

func (c *control) stopProfile() {
	if c.prof == nil {
		return
	}
	pprof.StopCPUProfile()
	c.prof.Close()
	c.prof = nil
}
