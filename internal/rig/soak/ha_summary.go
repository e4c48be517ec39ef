package soak

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// HASummary is what an HA soak measured, per setup.
type HASummary struct {
	Duration time.Duration
	Setups   []HASetupSummary
}

// HASetupSummary is one setup's figures. Every count of a fault is of
// faults that fired (see ha_chaos.go), except Scheduled.
type HASetupSummary struct {
	Setup     HASetup
	Processes int // replica processes started (three at first, then restarts and Runs that ended)
	Restarts  int // processes stopped by the restart fault
	Exits     int // processes whose Run ended by itself (a lost Lease, a fenced member)
	// Reconciles started; of them Ignored slept ignoring their context,
	// and Zombies were still running when their context was cancelled.
	Reconciles, Ignored, Zombies int
	Writes                       int   // ConfigMap writes that reached the server
	Fenced                       int64 // writes the manager's client refused (kube.IsFenced)
	Fired                        map[string]int64
	Scheduled                    map[string]int
	// The checks, from the independent record: each must be empty.
	Overlaps []string // a key reconciled by two processes at once
	PostLoss []string // a write that reached the server after its process lost its Lease or key
	Orphans  []string // keys nobody reconciled once the faults had ended
}

func (r *haMode) summary(orphans []string) HASetupSummary {
	s := HASetupSummary{Setup: r.setup, Fired: map[string]int64{}, Scheduled: map[string]int{},
		Overlaps: r.rec.overlaps(), PostLoss: r.rec.postLoss(r.leaseOf), Orphans: orphans}
	s.Reconciles, s.Writes, s.Zombies = r.rec.counts()
	s.Ignored, s.Fenced = int(r.ignored.Load()), r.fenced.Load()
	for _, sl := range r.slots {
		sl.mu.Lock()
		s.Processes += sl.gen
		s.Restarts += sl.restarts
		s.Exits += len(sl.exits)
		sl.mu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	maps.Copy(s.Fired, r.fired)
	maps.Copy(s.Scheduled, r.sched)
	for t, n := range r.srv.FiredFaults() {
		s.Fired[simKind(t).String()] += n
	}
	for _, l := range r.links {
		for f, n := range l.proxy.Fired() {
			s.Fired[netKind(f).String()] += n
		}
	}
	return s
}

// String renders the summary for people.
func (s HASummary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "HA soak: %v of faults per setup, default Lease timings\n", s.Duration)
	for _, st := range s.Setups {
		fmt.Fprintf(&b, "%s: %d processes (%d restarted, %d ended by themselves)\n", st.Setup, st.Processes, st.Restarts, st.Exits)
		fmt.Fprintf(&b, "  reconciles %d (ignoring their context %d, still running at their cancel %d)\n", st.Reconciles, st.Ignored, st.Zombies)
		fmt.Fprintf(&b, "  writes at the server %d, refused by the fence %d\n", st.Writes, st.Fenced)
		fmt.Fprintf(&b, "  faults fired:")
		for _, k := range slices.Sorted(maps.Keys(st.Fired)) {
			fmt.Fprintf(&b, " %s=%d", k, st.Fired[k])
		}
		fmt.Fprintf(&b, "\n  scheduled:")
		for _, k := range slices.Sorted(maps.Keys(st.Scheduled)) {
			fmt.Fprintf(&b, " %s=%d", k, st.Scheduled[k])
		}
		fmt.Fprintf(&b, "\n  overlaps %d, post-loss writes %d, orphaned keys %d\n", len(st.Overlaps), len(st.PostLoss), len(st.Orphans))
		for _, l := range [][]string{st.Overlaps, st.PostLoss, st.Orphans} {
			for i, v := range l {
				if i == 10 {
					fmt.Fprintf(&b, "    ... and %d more\n", len(l)-10)
					break
				}
				fmt.Fprintf(&b, "    %s\n", v)
			}
		}
	}
	return b.String()
}

// verdict is the run's failure, if any: an overlap, a post-loss write,
// an orphaned key, or a setup that reconciled nothing.
func (s HASummary) verdict() error {
	var errs []error
	for _, st := range s.Setups {
		switch {
		case st.Reconciles == 0:
			errs = append(errs, fmt.Errorf("%s: nothing was reconciled", st.Setup))
		case len(st.Overlaps) > 0:
			errs = append(errs, fmt.Errorf("%s: %d overlapping reconciles, first %s", st.Setup, len(st.Overlaps), st.Overlaps[0]))
		}
		if len(st.PostLoss) > 0 {
			errs = append(errs, fmt.Errorf("%s: %d writes after a loss reached the server, first %s", st.Setup, len(st.PostLoss), st.PostLoss[0]))
		}
		if len(st.Orphans) > 0 {
			errs = append(errs, fmt.Errorf("%s: %d keys not reconciled once the faults ended: %v", st.Setup, len(st.Orphans), st.Orphans))
		}
	}
	return errors.Join(errs...)
}
