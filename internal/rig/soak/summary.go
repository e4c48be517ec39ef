package soak

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// Summary is what a soak measured.
type Summary struct {
	Duration         time.Duration
	Cycles           int
	Writes           int64 // creates, updates and deletes made on the server
	Events           int64 // watch events applied, over all informers
	Relists          int64
	Watches          int64
	IdleTimeouts     int64
	Deletes          int // deletes delivered to handlers
	Tombstones       int // of which inferred from a relist
	Reconciles       int64
	Faults           map[string]int   // cycles each fault was scheduled in, by fault name
	Fired            map[string]int64 // what fired over the run, by kind (see CycleResult.Fired)
	Results          []CycleResult    // per cycle
	Convergence      []time.Duration  // per cycle: healthy again to every informer exact
	Lost             int              // objects still wrong at the convergence bound
	Violations       []string         // contradictory handler calls
	HeapSamples      []uint64         // live heap after GC, per cycle
	GoroutinesBefore int
	GoroutinesAfter  int

	// StoreCompact only (see Config.Store).
	Store               string   // "typed" or "compact"
	Decodes             int64    // objects the compact stores decoded
	DecodeErrors        int64    // objects that did not decode
	SnapshotWrites      int64    // snapshot files written
	Restarts            int      // informers restarted from their snapshots during the cycles and at the end
	RestartsRestored    int      // of the restarts during the cycles, those that loaded their snapshot
	RestartsWithoutList int      // of those, the ones that had not listed when the cycle converged
	NotRestored         []string // restarts during the cycles that did not load their snapshot
	// The final restart: one per informer, after the last cycle, with no
	// fault: each must load its snapshot and resume without listing.
	FinalRestarts           int
	FinalRestartConvergence time.Duration
	FinalRestartProblems    []string

	reconciles *atomic.Int64
}

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// joinCounts writes a map as "k=v k=v" in key order.
func joinCounts[N int | int64](m map[string]N) string {
	var fs []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fs = append(fs, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(fs, " ")
}

// perFault is one line per fault: cycles in which it fired, and its
// convergence times.
func (s Summary) perFault() string {
	type agg struct {
		cycles, fired int
		conv          []time.Duration
	}
	by := map[string]*agg{}
	for _, r := range s.Results {
		a := by[r.Fault]
		if a == nil {
			a = &agg{}
			by[r.Fault] = a
		}
		a.cycles++
		if r.FiredAll {
			a.fired++
		}
		a.conv = append(a.conv, r.Convergence)
	}
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(by)) {
		a := by[name]
		fmt.Fprintf(&b, "    %-16s fired in %d/%d cycles; convergence p50 %v, max %v\n",
			name, a.fired, a.cycles, round(percentile(a.conv, 0.5)), round(percentile(a.conv, 1)))
	}
	return b.String()
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(int(p*float64(len(s))), len(s)-1)]
}

// heapGrowth compares the live heap at the end with its low point after
// the first quarter of the run (the server's history and the caches fill
// during the first cycles).
func (s Summary) heapGrowth() (first, last uint64) {
	if len(s.HeapSamples) == 0 {
		return 0, 0
	}
	warm := s.HeapSamples[len(s.HeapSamples)/4:]
	return slices.Min(warm), s.HeapSamples[len(s.HeapSamples)-1]
}

// maxHeapGrowth is how much the live heap may grow after warm-up.
const maxHeapGrowth = 32 << 20

// unfired names the faults scheduled in some cycle that fired in none.
func (s Summary) unfired() []string {
	fired := map[string]bool{}
	for _, r := range s.Results {
		fired[r.Fault] = fired[r.Fault] || r.FiredAll
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(s.Faults)) {
		if !fired[name] {
			out = append(out, name)
		}
	}
	return out
}

func (s Summary) verdict() error {
	var problems []string
	if u := s.unfired(); len(u) > 0 {
		problems = append(problems, fmt.Sprintf("faults scheduled but never fired: %s", strings.Join(u, ", ")))
	}
	if s.Lost > 0 {
		problems = append(problems, fmt.Sprintf("%d objects lost", s.Lost))
	}
	if len(s.Violations) > 0 {
		problems = append(problems, fmt.Sprintf("%d contradictory handler calls, first: %s", len(s.Violations), s.Violations[0]))
	}
	if first, last := s.heapGrowth(); last > first+maxHeapGrowth {
		problems = append(problems, fmt.Sprintf("live heap grew from %d to %d KB", first>>10, last>>10))
	}
	if s.DecodeErrors > 0 {
		problems = append(problems, fmt.Sprintf("%d objects the compact stores could not decode", s.DecodeErrors))
	}
	if len(s.NotRestored) > 0 {
		problems = append(problems, fmt.Sprintf("%d restarts did not load their snapshot, first: %s", len(s.NotRestored), s.NotRestored[0]))
	}
	if len(s.FinalRestartProblems) > 0 {
		problems = append(problems, fmt.Sprintf("the final restart did not resume from the snapshots: %s", strings.Join(s.FinalRestartProblems, "; ")))
	}
	if s.GoroutinesAfter > s.GoroutinesBefore {
		problems = append(problems, fmt.Sprintf("%d goroutines after shutdown, %d before", s.GoroutinesAfter, s.GoroutinesBefore))
	}
	if len(problems) > 0 {
		return fmt.Errorf("soak failed: %s", strings.Join(problems, "; "))
	}
	return nil
}

func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kwatch soak: %v, %d cycles, %d informers, store %s\n", s.Duration, s.Cycles, len(specs), s.Store)
	fmt.Fprintf(&b, "  server writes %d; events applied %d; watches opened %d; relists %d; idle timeouts %d\n",
		s.Writes, s.Events, s.Watches, s.Relists, s.IdleTimeouts)
	fmt.Fprintf(&b, "  deletes delivered %d (tombstones %d); reconciles %d\n", s.Deletes, s.Tombstones, s.Reconciles)
	fmt.Fprintf(&b, "  faults scheduled: %s\n", joinCounts(s.Faults))
	fmt.Fprintf(&b, "  fired, by kind: %s\n", joinCounts(s.Fired))
	fmt.Fprintf(&b, "  convergence after each fault (healthy again to every cache exact): p50 %v, p99 %v, max %v\n",
		round(percentile(s.Convergence, 0.5)), round(percentile(s.Convergence, 0.99)), round(percentile(s.Convergence, 1)))
	b.WriteString(s.perFault())
	if s.Store == "compact" {
		fmt.Fprintf(&b, "  compact: decodes %d (errors %d); snapshot writes %d\n", s.Decodes, s.DecodeErrors, s.SnapshotWrites)
		fmt.Fprintf(&b, "  restarts from snapshots during the cycles: %d, loaded %d, resumed without a list %d\n",
			s.Restarts-s.FinalRestarts, s.RestartsRestored, s.RestartsWithoutList)
		fmt.Fprintf(&b, "  final restart: %d informers, converged in %v, problems: %d\n",
			s.FinalRestarts, round(s.FinalRestartConvergence), len(s.FinalRestartProblems))
	}
	fmt.Fprintf(&b, "  objects lost: %d; contradictory handler calls: %d\n", s.Lost, len(s.Violations))
	first, last := s.heapGrowth()
	fmt.Fprintf(&b, "  live heap after warm-up: low %.1f MB, end %.1f MB\n", float64(first)/(1<<20), float64(last)/(1<<20))
	fmt.Fprintf(&b, "  goroutines: %d before, %d after shutdown\n", s.GoroutinesBefore, s.GoroutinesAfter)
	return b.String()
}
