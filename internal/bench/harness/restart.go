package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/kwatch/kwatch/internal/bench/engine"
	"github.com/kwatch/kwatch/internal/bench/wire"
)

// The restart scenario: after an engine process has run the other
// scenarios and exited, the server takes restartWrites (a hundredth of the
// pods) and a second process of the same row starts and syncs. A row
// whose engine keeps a snapshot (snapshotRow) wrote it when its first
// process's informer returned and starts the second from it: it resumes
// its watch from the snapshot's resourceVersion and catches up with the
// writes made meanwhile. Every other row's restart is a fresh initial
// list, which is what a restarted client-go informer does.
//
// The scenario runs only when a run has a snapshot row in it, and then
// for every row, so that the ratios compare the same restart.

// snapshotRow reports whether row's engine starts from a snapshot.
func snapshotRow(row Row) bool {
	return row.Engine == engine.EngineCompact || row.Engine == engine.EngineCompactRead
}

// restartScenario reports whether the run measures restarts.
func restartScenario(cfg *Config) bool { return slices.ContainsFunc(cfg.Rows, snapshotRow) }

// restartWrites is how many pods change while the engine is down.
func restartWrites(pods int) int { return max(pods/100, 1) }

// runRow runs every scenario of row in one engine process (runEngine) and
// then, when the run measures restarts, the restart in a second one.
func runRow(ctx context.Context, cfg *Config, row Row, srv *servers, pods, run int) (engineRun, error) {
	be := srv.backendFor(row)
	if !restartScenario(cfg) || row.ThroughputOnly {
		return runEngine(ctx, cfg, row, be, pods, run)
	}
	var snap string
	if snapshotRow(row) {
		dir, err := os.MkdirTemp("", "kwatch-bench-snapshot-")
		if err != nil {
			return engineRun{}, err
		}
		defer os.RemoveAll(dir)
		snap = filepath.Join(dir, "pods.snap")
		row.Env = append(slices.Clone(row.Env), engine.EnvSnapshot+"="+snap)
	}
	out, err := runEngine(ctx, cfg, row, be, pods, run)
	if err != nil {
		return out, err
	}
	if err := restart(ctx, cfg, row, be, pods, run, snap, &out); err != nil {
		return out, fmt.Errorf("%s at %d pods, restart: %w", row.Name, pods, err)
	}
	return out, nil
}

// restart changes restartWrites pods while no engine runs, then starts a
// new engine process of row and records its sync as the restart; snap is
// the row's snapshot file, or "".
func restart(ctx context.Context, cfg *Config, row Row, be *backend, pods, run int, snap string, out *engineRun) error {
	if snap != "" {
		fi, err := os.Stat(snap)
		if err != nil {
			return fmt.Errorf("no snapshot after the first process: %w", err)
		}
		out.metrics["restart_snapshot_mb"] = float64(fi.Size()) / (1 << 20)
	}
	for i := range restartWrites(pods) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := be.update(i, map[string]string{wire.SeqKey: "restart-" + strconv.Itoa(i)}); err != nil {
			return err
		}
	}
	tracePrefix := cfg.tracePrefix(fmt.Sprintf("%s-%d-restart", row.Name, pods), run)
	p, err := startProc(cfg.Exe, engineArgs(cfg, row, be.url, tracePrefix), append(slices.Clone(cfg.EngineEnv), row.Env...), cfg.LogDir,
		fmt.Sprintf("%s-%d-run%d-restart.log", row.Name, pods, run))
	if err != nil {
		return err
	}
	cmd := wire.Command{Op: "sync", TimeoutSec: cfg.PhaseTimeout.Seconds()}
	if cfg.ProfileDir != "" && run == 0 {
		cmd.Profile = filepath.Join(cfg.ProfileDir, fmt.Sprintf("%s-%d-restart.pprof", row.Name, pods))
	}
	rep, err := p.call(cmd)
	if err != nil {
		p.kill()
		return err
	}
	s := rep.Sync
	if s.Objects != pods {
		p.kill()
		return fmt.Errorf("restarted %s synced %d objects, want %d", row.Name, s.Objects, pods)
	}
	out.metrics["restart_wall_s"] = float64(s.WallNS) / 1e9
	out.metrics["restart_handlers_s"] = float64(s.HandlersNS) / 1e9
	out.metrics["restart_cpu_s"] = float64(s.CPUNS) / 1e9
	out.metrics["restart_peak_rss_mb"] = float64(s.PeakRSS) / (1 << 20)
	out.metrics["restart_heap_kb_per_pod"] = float64(s.HeapAlloc) / float64(s.Objects) / 1024
	_, err = p.finish(2 * time.Minute)
	return err
}
