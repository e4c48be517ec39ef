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
	"sync"
	"time"

	"github.com/kwatch/kwatch/internal/bench/wire"
)

// CtlConfig chooses the controller a -role=controller process runs.
type CtlConfig struct {
	// Engine is one of CtlEngines.
	Engine string
	// Host is the API server's base URL.
	Host string
	// Workers is the number of concurrent reconciles (both engines).
	Workers int
}

// CtlEngines names every controller engine.
var CtlEngines = []string{"kwatch-controller", "kwatch-controller-nocopy", "controller-runtime", "controller-runtime-fifo"}

// ctlEngine is a controller manager: run starts its caches and workers
// and returns when ctx ends and its goroutines have exited.
type ctlEngine interface {
	run(ctx context.Context) error
}

func newCtlEngine(cfg CtlConfig, p *ctlProbe) (ctlEngine, error) {
	switch cfg.Engine {
	case "kwatch-controller":
		return newKwatchCtl(cfg, p, false)
	case "kwatch-controller-nocopy":
		return newKwatchCtl(cfg, p, true)
	case "controller-runtime":
		return newRuntimeCtl(cfg, p, true)
	case "controller-runtime-fifo":
		return newRuntimeCtl(cfg, p, false)
	}
	return nil, fmt.Errorf("engine: unknown controller engine %q (want one of %v)", cfg.Engine, CtlEngines)
}

// ServeController runs the controller cfg names, answering the harness's
// wire.CtlCommands from in on out, until "exit" or the end of in. It
// returns after the manager's goroutines have all exited.
func ServeController(ctx context.Context, cfg CtlConfig, in io.Reader, out io.Writer) error {
	p := &ctlProbe{}
	e, err := newCtlEngine(cfg, p)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	s := &ctlServer{p: p}
	started := false
	sc := bufio.NewScanner(in)
	enc := json.NewEncoder(out)
	for sc.Scan() {
		var cmd wire.CtlCommand
		if err := json.Unmarshal(sc.Bytes(), &cmd); err != nil {
			return fmt.Errorf("engine: bad command %q: %w", sc.Text(), err)
		}
		var r wire.CtlReply
		switch cmd.Op {
		case "exit":
			cancel()
			wg.Wait()
			return enc.Encode(wire.CtlReply{})
		case "sync":
			if started {
				err = errors.New("engine: sync twice")
				break
			}
			if err = s.begin(cmd, ""); err != nil { // cmd.ID: the round the pods already carry
				break
			}
			started = true
			wg.Go(func() {
				if err := e.run(runCtx); err != nil {
					fmt.Fprintln(os.Stderr, "engine run:", err)
				}
			})
			if r.Sync, err = s.wait(ctx, cmd, true); err == nil && cmd.Profile != "" {
				err = writeHeapProfile(cmd.Profile)
			}
		case "arm":
			err = s.begin(cmd, cmd.Profile)
		case "wait":
			r.Round, err = s.wait(ctx, cmd, false)
		default:
			err = fmt.Errorf("engine: unknown op %q", cmd.Op)
		}
		if err != nil {
			r.Err = err.Error()
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return sc.Err()
}

// ctlServer holds the armed phase between commands.
type ctlServer struct {
	p        *ctlProbe
	finished chan struct{} // the armed phase's; nil when none
	startNS  int64
	cpu0     time.Duration
	calls0   int64
	patches0 int64
	prof     *os.File
}

func (s *ctlServer) begin(cmd wire.CtlCommand, profile string) error {
	if s.finished != nil {
		return errors.New("engine: a phase is already armed")
	}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return err
		}
		s.prof = f
	}
	s.calls0, s.patches0 = s.p.calls.Load(), s.p.patches.Load()
	s.startNS, s.cpu0 = time.Now().UnixNano(), cpuTime()
	s.finished = s.p.arm(cmd.ID, cmd.Keys)
	return nil
}

func (s *ctlServer) wait(ctx context.Context, cmd wire.CtlCommand, heap bool) (*wire.CtlPhase, error) {
	fin := s.finished
	if fin == nil {
		return nil, errors.New("engine: wait without arm")
	}
	s.finished = nil
	defer s.stopProfile()
	timeout := time.Duration(cmd.TimeoutSec * float64(time.Second))
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case <-fin:
	case <-ctx.Done():
		return nil, fmt.Errorf("engine: %d of %d keys complete after %d reconciles: %w",
			s.p.result().keys, cmd.Keys, s.p.calls.Load()-s.calls0, ctx.Err())
	}
	d := s.p.result()
	ph := &wire.CtlPhase{Keys: d.keys, StartNS: s.startNS, FirstNS: s.p.firstNS.Load(), DoneNS: d.ns, CPUNS: int64(d.cpu - s.cpu0),
		Reconciles: d.calls - s.calls0, Patches: d.patches - s.patches0, PeakRSS: peakRSS()}
	if heap {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		ph.HeapAlloc = int64(ms.HeapAlloc)
	}
	return ph, nil
}

// writeHeapProfile writes a profile of the live heap (as of the last GC,
// which wait forced) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (s *ctlServer) stopProfile() {
	if s.prof == nil {
		return
	}
	pprof.StopCPUProfile()
	s.prof.Close()
	s.prof = nil
}
