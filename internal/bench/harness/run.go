package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/kwatch/kwatch/internal/bench/report"
)

// Run runs every row at every pod count, then the workqueue scenario, and
// returns the results with medians and comparisons. A failed engine run is
// recorded in Results.Failures and the others go on.
func Run(ctx context.Context, cfg Config) (*report.Results, error) {
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
		GoVersion: runtime.Version(), CPUs: runtime.NumCPU(), Settings: settings(&cfg)}
	cfg.logf("engine logs in %s", cfg.LogDir)
	err := runAll(ctx, &cfg, res)
	if err != nil {
		// Stopped early (an interrupt, a timeout), the rows measured so
		// far still get their medians, ratios and headlines.
		res.Failures = append(res.Failures, "run stopped early: "+err.Error())
	}
	var pairs []report.Pair
	for _, p := range PairsOf(cfg.Rows) {
		pairs = append(pairs, report.Pair{Kwatch: p.Kwatch, ClientGo: p.ClientGo})
	}
	report.Compare(res, pairs, cfg.PodCounts)
	res.Headlines = HeadlinesOf(cfg.Rows)
	res.WallS = time.Since(start).Seconds()
	return res, err
}

func runAll(ctx context.Context, cfg *Config, res *report.Results) error {
	for _, n := range cfg.PodCounts {
		if err := runPodCount(ctx, cfg, n, res); err != nil {
			return err
		}
	}
	return runQueues(ctx, cfg, res)
}

func (cfg *Config) logf(format string, args ...any) {
	if cfg.Log != nil {
		fmt.Fprintf(cfg.Log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
	}
}

func settings(cfg *Config) []string {
	return []string{
		fmt.Sprintf("pods: %v (sim-generated, 3-4 KB of JSON each); runs: %d for main rows (overrides by pod count: %v), %d for the others",
			cfg.PodCounts, cfg.Runs, cfg.MainRunsAt, cfg.ExtraRuns),
		fmt.Sprintf("throughput: %d MODIFIED events written while the engine's watch is held, then read from the server's history", cfg.ThroughputEvents),
		fmt.Sprintf("latency: %d events at %.0f/s, stamped just before each server write%s", cfg.LatencyEvents, cfg.LatencyRate, latencyGCNote(cfg)),
		"relist: the server loses its history (as after a restart) with a write the engine has not seen; the engine's resume gets 410",
		fmt.Sprintf("workqueue: %d distinct keys, one producer, workers %v, %d runs", cfg.QueueItems, cfg.QueueWorkers, cfg.QueueRuns),
		"each engine runs in its own process, one at a time; the servers run in the harness process",
	}
}

func (cfg *Config) runsFor(r Row, pods int) int {
	if !r.Main {
		return cfg.ExtraRuns
	}
	if n, ok := cfg.MainRunsAt[pods]; ok {
		return n
	}
	return cfg.Runs
}

// runPodCount loads n pods and runs every row, interleaving runs so that
// drift on a shared machine touches every row alike.
func runPodCount(ctx context.Context, cfg *Config, n int, res *report.Results) error {
	withFront := false
	maxRuns := 0
	for _, r := range cfg.Rows {
		withFront = withFront || r.Proto
		maxRuns = max(maxRuns, cfg.runsFor(r, n))
	}
	cfg.logf("loading %d pods", n)
	srv, err := startServers(n, cfg.ThroughputEvents+cfg.LatencyEvents+10000, withFront)
	if err != nil {
		return err
	}
	defer srv.close()
	rows := map[string]*report.Row{}
	for _, r := range cfg.Rows {
		rows[r.Name] = &report.Row{Name: r.Name, Pods: n}
		res.Rows = append(res.Rows, rows[r.Name])
	}
	defer func() {
		for _, r := range rows {
			r.Finish()
		}
	}()
	for run := range maxRuns {
		for _, r := range cfg.Rows {
			if run >= cfg.runsFor(r, n) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			out, err := runRow(ctx, cfg, r, srv, n, run)
			if err != nil {
				cfg.logf("FAILED %v", err)
				res.Failures = append(res.Failures, err.Error())
				if errors.Is(err, context.Canceled) {
					return err
				}
				continue
			}
			rows[r.Name].Add(out.metrics)
			rows[r.Name].Latency = append(rows[r.Name].Latency, out.latency...)
			cfg.logf("%s %d pods run %d: %s", r.Name, n, run, summary(out.metrics))
		}
	}
	return nil
}

func summary(m map[string]float64) string {
	s := ""
	for _, k := range []string{"sync_wall_s", "heap_kb_per_pod", "tput_events_per_s", "tput_cpu_us_per_event", "lat_p99_ms", "relist_total_s", "relist_list_s"} {
		if v, ok := m[k]; ok {
			s += fmt.Sprintf("%s=%.3g ", k, v)
		}
	}
	return s
}

func latencyGCNote(cfg *Config) string {
	if !cfg.LatencyGC {
		return ""
	}
	return fmt.Sprintf("; each engine starts a garbage collection after %d deliveries", max(cfg.LatencyEvents/2, 1))
}
