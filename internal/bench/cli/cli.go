// Package cli is cmd/bench's command line, in a package so that tests can
// run the same roles from their own binary.
package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"

	"github.com/kwatch/kwatch/internal/bench/engine"
	"github.com/kwatch/kwatch/internal/bench/harness"
	"github.com/kwatch/kwatch/internal/bench/report"
)

// Main runs the command with args (without the program name) and returns
// its exit code. The roles: harness (the default) runs the benchmark;
// engine serves one informer to the harness over stdin and stdout; queue
// runs one workqueue measurement and prints it as JSON.
func Main(args []string) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var (
		role = fs.String("role", "harness", "harness, engine, controller or queue")
		// harness
		quick      = fs.Bool("quick", false, "smoke run (under two minutes)")
		out        = fs.String("out", "results", "directory for the result files")
		rows       = fs.String("rows", "", "comma-separated row names to run (default: all)")
		tune       = fs.Bool("tune", false, "add kwatch tuning rows (decoder parallelism, page size)")
		pods       = fs.String("pods", "", "comma-separated pod counts, overriding the mode's")
		runs       = fs.Int("runs", 0, "runs for main rows, overriding the mode's")
		latEvents  = fs.Int("latency-events", 0, "events of the latency scenario, overriding the mode's (at its rate: 1000/s in full runs)")
		latGC      = fs.Bool("latency-gc", false, "every engine starts a garbage collection halfway through the latency scenario")
		profileDir = fs.String("profile-dir", "", "write CPU profiles of each row's first run here (and, for controller rows, a profile of the live heap after the sync)")
		traceDir   = fs.String("trace-dir", "", "write runtime traces of each row's first run here (engine and harness; the phases of -trace-phases)")
		trPhases   = fs.String("trace-phases", "latency", "comma-separated phases -trace-dir traces (engine role: -trace): sync, throughput, latency, relist")
		engineEnv  []string
		noQueue    = fs.Bool("no-queue", false, "skip the workqueue scenario")
		name       = fs.String("name", "", "name of the result files (default: the mode, quick or full)")
		scenarios  = fs.String("scenarios", "", `"controller": kwatch's controller against controller-runtime instead of the informer scenarios`)
		rounds     = fs.Int("rounds", 0, "measured rounds per controller process, overriding the default (controller scenario)")
		// engine and queue
		eng      = fs.String("engine", "", "engine to run (engine and queue roles)")
		host     = fs.String("host", "", "API server URL (engine role)")
		listMode = fs.String("list-mode", "", "kwatch list mode: auto or paged")
		pageSize = fs.Int64("page-size", 0, "kwatch page size (0: default)")
		par      = fs.Int("parallelism", 0, "kwatch decoder parallelism (0: default)")
		workers  = fs.Int("workers", 0, "workqueue workers (queue role; default 1), reconcile workers (controller role and scenario; default 4)")
		items    = fs.Int("items", 100000, "workqueue items (queue role)")
		qprof    = fs.String("cpuprofile", "", "CPU profile of the workqueue run (queue role), or of the harness process and the servers it hosts (harness role)")
		trace    = fs.String("trace", "", "path prefix of runtime traces of the -trace-phases (engine role)")
		gcAfter  = fs.Int("latency-gc-after", 0, "start a garbage collection after this many stamped deliveries of the latency phase (engine role)")
	)
	fs.Func("engine-env", "KEY=VALUE added to every engine's environment, e.g. GODEBUG=gctrace=1 (repeatable)", func(s string) error {
		if !strings.Contains(s, "=") {
			return fmt.Errorf("want KEY=VALUE, got %q", s)
		}
		engineEnv = append(engineEnv, s)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch *role {
	case "engine":
		err = engine.Serve(ctx, engine.Config{Engine: *eng, Host: *host, ListMode: *listMode,
			PageSize: *pageSize, Parallelism: *par, TracePrefix: *trace, TracePhases: splitList(*trPhases), LatencyGCAfter: *gcAfter}, os.Stdin, os.Stdout)
	case "controller":
		err = engine.ServeController(ctx, engine.CtlConfig{Engine: *eng, Host: *host, Workers: *workers}, os.Stdin, os.Stdout)
	case "queue":
		err = runQueue(*eng, max(*workers, 1), *items, *qprof)
	case "harness":
		if *qprof != "" {
			stopProfile, perr := engine.StartCPUProfile(*qprof)
			if perr != nil {
				err = perr
				break
			}
			defer stopProfile()
		}
		if *scenarios == "controller" {
			err = runController(ctx, ctlFlags{rows: *rows, pods: *pods, runs: *runs, rounds: *rounds, workers: *workers,
				name: *name, profileDir: *profileDir, out: *out, tune: *tune})
			break
		}
		if *scenarios != "" {
			err = fmt.Errorf("unknown -scenarios %q (want controller, or none for the informer scenarios)", *scenarios)
			break
		}
		cfg := harness.Full()
		if *quick {
			cfg = harness.Quick()
		}
		cfg.ProfileDir, cfg.Log = *profileDir, os.Stderr
		cfg.TraceDir, cfg.TracePhases, cfg.EngineEnv = *traceDir, splitList(*trPhases), engineEnv
		if *name != "" {
			cfg.Mode = *name
		}
		if *latEvents > 0 {
			cfg.LatencyEvents = *latEvents
		}
		cfg.LatencyGC = *latGC
		if err = adjust(&cfg, *rows, *pods, *runs, *tune, *noQueue); err == nil {
			err = runHarness(ctx, cfg, *out)
		}
	default:
		err = fmt.Errorf("unknown role %q", *role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	return 0
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	return slices.DeleteFunc(strings.Split(s, ","), func(x string) bool { return x == "" })
}

func runQueue(eng string, workers, items int, profile string) error {
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	res, err := engine.RunQueue(eng, workers, items)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// adjust applies the command-line overrides to cfg.
func adjust(cfg *harness.Config, rows, pods string, runs int, tune, noQueue bool) error {
	if tune {
		cfg.Rows = append(cfg.Rows, harness.TuningRows()...)
	}
	if rows != "" {
		// The rows named, in the order named: each run visits them so.
		// The compact-store rows are there to be picked, not run by default.
		all := append(slices.Clone(cfg.Rows), harness.CompactRows()...)
		var picked []harness.Row
		for _, name := range strings.Split(rows, ",") {
			i := slices.IndexFunc(all, func(r harness.Row) bool { return r.Name == name })
			if i < 0 {
				return fmt.Errorf("no row %q (-rows=%s; with -tune the tuning rows too)", name, rows)
			}
			picked = append(picked, all[i])
		}
		cfg.Rows = picked
	}
	if pods != "" {
		cfg.PodCounts = nil
		for _, s := range strings.Split(pods, ",") {
			var n int
			if _, err := fmt.Sscan(s, &n); err != nil || n <= 0 {
				return fmt.Errorf("bad pod count %q", s)
			}
			cfg.PodCounts = append(cfg.PodCounts, n)
		}
	}
	if runs > 0 {
		cfg.Runs, cfg.MainRunsAt = runs, nil
	}
	if noQueue {
		cfg.QueueItems = 0
	}
	return nil
}

func runHarness(ctx context.Context, cfg harness.Config, out string) error {
	res, err := harness.Run(ctx, cfg)
	if res == nil {
		return err
	}
	if werr := writeResults(res, out); werr != nil {
		return werr
	}
	return err
}

func writeResults(res *report.Results, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, res.Mode)
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".json", append(b, '\n'), 0o644); err != nil {
		return err
	}
	for _, w := range []struct {
		path  string
		write func(*os.File) error
	}{
		{base + ".md", func(f *os.File) error { return report.WriteMarkdown(f, res) }},
		{base + "-latency.svg", func(f *os.File) error { return report.WriteLatencySVG(f, res) }},
	} {
		f, err := os.Create(w.path)
		if err != nil {
			return err
		}
		err = w.write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "results in %s.{json,md} and %s-latency.svg\n", base, base)
	return nil
}
