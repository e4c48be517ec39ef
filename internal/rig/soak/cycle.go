package soak

import (
	"context"
	"fmt"
	"time"
)

// CycleResult is what one cycle of the soak measured. A plain value.
type CycleResult struct {
	Fault string // the fault's name
	// Fired is what fired on the server and the proxy from the injection to
	// the clearing, by kind ("error", "drop-watches", "net:freeze", ...).
	Fired map[string]int64
	// FiredAll says whether every kind the fault needs fired.
	FiredAll bool
	// Hold is how long churn went on past the cycle waiting for the fault to
	// fire (at most Config.FireBound).
	Hold time.Duration
	// Convergence runs from the moment the server was healthy again (faults
	// cleared, any refusal of connections over) to every informer's store and
	// handler replay equal to the server.
	Convergence time.Duration
	Lost        int // objects still wrong at Config.ConvergeBound
}

// cycles alternates churn-with-a-fault and quiet convergence until the
// duration is spent.
func (r *run) cycles(ctx context.Context) error {
	for _, e := range r.engines {
		wctx, cancel := context.WithTimeout(ctx, r.cfg.ConvergeBound)
		ok := e.inf.WaitForSync(wctx)
		cancel()
		if !ok {
			return fmt.Errorf("informer %s did not sync within %v", e.name, r.cfg.ConvergeBound)
		}
	}
	end := time.Now().Add(r.cfg.Duration)
	for time.Now().Before(end) && ctx.Err() == nil {
		f := r.nextFault()
		res, healthyAt, err := r.churn(ctx, f, r.restarting())
		if err != nil {
			return err
		}
		// Healthy again: nothing queued or taken fires any more, and any
		// refusal of new connections is over.
		r.srv.ClearFaults()
		if d := time.Until(healthyAt); d > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d):
			}
		}
		res.Convergence, res.Lost = r.converge(ctx)
		r.checkRestores()
		r.sum.Results = append(r.sum.Results, res)
		r.sum.Convergence = append(r.sum.Convergence, res.Convergence)
		r.sum.Lost += res.Lost
		if res.Lost > 0 {
			fmt.Fprintf(r.cfg.Out, "cycle %d (%s): %d objects did not converge within %v\n", r.sum.Cycles, f.name, res.Lost, r.cfg.ConvergeBound)
		}
		if !res.FiredAll {
			fmt.Fprintf(r.cfg.Out, "cycle %d (%s): needs %v to fire, fired %v within %v\n", r.sum.Cycles, f.name, f.fires, res.Fired, r.cfg.FireBound)
		}
		r.sum.Cycles++
		r.sampleHeap()
	}
	return ctx.Err()
}

// nextFault deals the faults in rounds, each round in a random order, so
// that every fault is met once in every len(faults) cycles.
func (r *run) nextFault() fault {
	if len(r.deck) == 0 {
		r.deck = r.rng.Perm(len(faults))
	}
	f := faults[r.deck[0]]
	r.deck = r.deck[1:]
	return f
}

// churn writes at the configured rate for one cycle and makes f halfway;
// then, until f has fired or Config.FireBound passes, it keeps writing
// (a drop or stall fault fires only after some events). With restart, the
// informers are stopped for the first quarter (they miss its writes) and
// started again on their snapshots, and f is made once they watch again.
// It returns what fired and when trouble f started on its own ends.
func (r *run) churn(ctx context.Context, f fault, restart bool) (CycleResult, time.Time, error) {
	res := CycleResult{Fault: f.name}
	if restart {
		r.stopEngines()
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	perTick := max(r.cfg.Rate/100, 1)
	end := time.Now().Add(r.cfg.Cycle)
	var before map[kind]int64
	var healthyAt, restartedAt time.Time
	injected, restarted := false, false
	for {
		if injected && !time.Now().Before(end) {
			d := delta(before, r.fired())
			if res.FiredAll = f.firedAll(d); res.FiredAll || time.Since(end) > r.cfg.FireBound {
				res.Fired, res.Hold = kindCounts(d), time.Since(end)
				return res, healthyAt, nil
			}
		}
		select {
		case <-ctx.Done():
			return res, healthyAt, ctx.Err()
		case <-tick.C:
		}
		if restart && !restarted && time.Until(end) < r.cfg.Cycle*3/4 {
			if err := r.restartEngines(); err != nil {
				return res, healthyAt, err
			}
			restarted, restartedAt = true, time.Now()
		}
		// After a restart the fault waits (bounded) for the new informers
		// to have synced, to watch and to have delivered the initial list
		// to their handlers, so that they meet it as informers that had
		// been running would: a fault on connections finds theirs open, and
		// a cut one is not busy decoding the snapshot's objects for its
		// handler when it should reconnect (server-restart's refusal lasts
		// from 100 ms).
		if !injected && time.Until(end) < r.cfg.Cycle/2 && (!restart || restarted && (r.caughtUp() || time.Since(restartedAt) > r.cfg.FireBound)) {
			before = r.fired()
			var err error
			if healthyAt, err = f.do(r.srv, r.proxy, r.rng); err != nil {
				return res, healthyAt, fmt.Errorf("fault %s: %w", f.name, err)
			}
			r.sum.Faults[f.name]++
			injected = true
		}
		for range perTick {
			if err := r.write(); err != nil {
				return res, healthyAt, err
			}
		}
	}
}

// caughtUp reports whether every informer has synced, has a watch open
// and has no change waiting for its handler.
func (r *run) caughtUp() bool {
	for _, e := range r.engines {
		if !e.inf.HasSynced() || !e.inf.Health().Watching || e.inf.Stats().HandlerBacklog > 0 {
			return false
		}
	}
	return true
}

func kindCounts(d map[kind]int64) map[string]int64 {
	out := make(map[string]int64, len(d))
	for k, n := range d {
		out[string(k)] = n
	}
	return out
}

// converge waits until every informer's store and handler replay equal the
// server's state for its selection; it returns how long that took and how
// many objects were still wrong at the bound.
func (r *run) converge(ctx context.Context) (time.Duration, int) {
	start := time.Now()
	want := r.expected()
	for {
		wrong := 0
		for i, e := range r.engines {
			wrong += diff(storeState(e.inf), want[i]) + diff(e.mirror.snapshot(), want[i])
		}
		if wrong == 0 {
			return time.Since(start), 0
		}
		if time.Since(start) > r.cfg.ConvergeBound || ctx.Err() != nil {
			return time.Since(start), wrong
		}
		time.Sleep(5 * time.Millisecond)
	}
}
