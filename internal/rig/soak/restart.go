package soak

import (
	"context"
	"fmt"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
)

// Restarts from snapshots, in StoreCompact. A restarted informer is a new
// process's: a new client (no pooled connection of the old one, which a
// dead-connection fault may have frozen) and a new informer on the same
// snapshot file, with the same mirror, whose state starts again from the
// snapshot's objects (delivered as the initial list). The old informer's
// Run has returned, its handler calls with it, before the mirror resets.

// restarting reports whether the cycle about to run restarts the informers.
func (r *run) restarting() bool {
	return r.cfg.Store == informer.StoreCompact && r.sum.Cycles%r.cfg.RestartEvery == r.cfg.RestartEvery-1
}

// restartEngines starts every stopped engine again: new client, new
// informer on its snapshot file.
func (r *run) restartEngines() error {
	for _, e := range r.engines {
		if err := e.restart(r.runCtx, r.newClient); err != nil {
			return fmt.Errorf("restart %s: %w", e.name, err)
		}
		r.sum.Restarts++
		e.checkRestore = true
	}
	return nil
}

// restart replaces the stopped engine's informer with a new one.
func (e *engine) restart(ctx context.Context, newClient func() (*kube.Client, error)) error {
	e.stop()
	addStats(&e.past, e.inf.Stats())
	e.opts.Client.CloseIdleConnections()
	c, err := newClient()
	if err != nil {
		return err
	}
	e.opts.Client = c
	e.mirror.reset()
	if err := e.build(); err != nil {
		return err
	}
	e.run(ctx)
	return nil
}

// checkRestores counts, for every engine restarted since the last check,
// whether its informer loaded its snapshot and whether it has listed since
// (a fault after the restart may make it: 410s, lost history). Called once
// the engines have converged.
func (r *run) checkRestores() {
	for _, e := range r.engines {
		if !e.checkRestore {
			continue
		}
		e.checkRestore = false
		st := e.inf.Stats()
		if st.Restored {
			r.sum.RestartsRestored++
		} else {
			r.sum.NotRestored = append(r.sum.NotRestored, fmt.Sprintf("cycle %d: %s", r.sum.Cycles, e.name))
		}
		if st.Relists == 0 {
			r.sum.RestartsWithoutList++
		}
	}
}

// finalRestart runs after the last cycle: every informer synced, stopped,
// the server changed while they are down (with no fault), and started
// again. Each must load its snapshot, resume its watch without a list,
// and converge to the server.
func (r *run) finalRestart(ctx context.Context) error {
	if err := r.waitSynced(ctx, "before the final restart"); err != nil {
		return err
	}
	r.stopEngines()
	for range max(r.cfg.Rate/4, 1) {
		if err := r.write(); err != nil {
			return err
		}
	}
	if err := r.restartEngines(); err != nil {
		return err
	}
	if err := r.waitSynced(ctx, "after the final restart"); err != nil {
		return err
	}
	conv, lost := r.converge(ctx)
	r.sum.FinalRestartConvergence, r.sum.Lost = conv, r.sum.Lost+lost
	if lost > 0 {
		fmt.Fprintf(r.cfg.Out, "final restart: %d objects did not converge within %v\n", lost, r.cfg.ConvergeBound)
	}
	for _, e := range r.engines {
		e.checkRestore = false
		r.sum.FinalRestarts++
		if st := e.inf.Stats(); !st.Restored || st.Relists != 0 || st.Gone != 0 {
			r.sum.FinalRestartProblems = append(r.sum.FinalRestartProblems,
				fmt.Sprintf("%s: restored %v, relists %d, 410s %d", e.name, st.Restored, st.Relists, st.Gone))
		}
	}
	return nil
}

// waitSynced waits, bounded by Config.ConvergeBound, for every informer to
// have synced.
func (r *run) waitSynced(ctx context.Context, when string) error {
	for _, e := range r.engines {
		wctx, cancel := context.WithTimeout(ctx, r.cfg.ConvergeBound)
		ok := e.inf.WaitForSync(wctx)
		cancel()
		if !ok {
			return fmt.Errorf("informer %s did not sync within %v %s", e.name, r.cfg.ConvergeBound, when)
		}
	}
	return nil
}

// addStats adds the counters of st that the summary sums to sum.
func addStats(sum *informer.Stats, st informer.Stats) {
	sum.Events += st.Events
	sum.Relists += st.Relists
	sum.Watches += st.Watches
	sum.IdleTimeouts += st.IdleTimeouts
	sum.Gone += st.Gone
	sum.Decodes += st.Decodes
	sum.DecodeErrors += st.DecodeErrors
	sum.SnapshotWrites += st.SnapshotWrites
}
