package soak

import (
	"fmt"
	"slices"
	"sort"
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
	Faults           map[string]int
	Convergence      []time.Duration // per cycle: quiet to every informer exact
	Lost             int             // objects still wrong at the convergence bound
	Violations       []string        // contradictory handler calls
	HeapSamples      []uint64        // live heap after GC, per cycle
	GoroutinesBefore int
	GoroutinesAfter  int

	reconciles *atomic.Int64
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

func (s Summary) verdict() error {
	var problems []string
	if s.Lost > 0 {
		problems = append(problems, fmt.Sprintf("%d objects lost", s.Lost))
	}
	if len(s.Violations) > 0 {
		problems = append(problems, fmt.Sprintf("%d contradictory handler calls, first: %s", len(s.Violations), s.Violations[0]))
	}
	if first, last := s.heapGrowth(); last > first+maxHeapGrowth {
		problems = append(problems, fmt.Sprintf("live heap grew from %d to %d KB", first>>10, last>>10))
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
	fmt.Fprintf(&b, "kwatch soak: %v, %d cycles, %d informers\n", s.Duration, s.Cycles, len(specs))
	fmt.Fprintf(&b, "  server writes %d; events applied %d; watches opened %d; relists %d; idle timeouts %d\n",
		s.Writes, s.Events, s.Watches, s.Relists, s.IdleTimeouts)
	fmt.Fprintf(&b, "  deletes delivered %d (tombstones %d); reconciles %d\n", s.Deletes, s.Tombstones, s.Reconciles)
	names := make([]string, 0, len(s.Faults))
	for k := range s.Faults {
		names = append(names, k)
	}
	sort.Strings(names)
	var fs []string
	for _, k := range names {
		fs = append(fs, fmt.Sprintf("%s=%d", k, s.Faults[k]))
	}
	fmt.Fprintf(&b, "  faults: %s\n", strings.Join(fs, " "))
	fmt.Fprintf(&b, "  convergence after each fault: p50 %v, p99 %v, max %v\n",
		percentile(s.Convergence, 0.5).Round(time.Millisecond), percentile(s.Convergence, 0.99).Round(time.Millisecond),
		percentile(s.Convergence, 1).Round(time.Millisecond))
	fmt.Fprintf(&b, "  objects lost: %d; contradictory handler calls: %d\n", s.Lost, len(s.Violations))
	first, last := s.heapGrowth()
	fmt.Fprintf(&b, "  live heap after warm-up: low %.1f MB, end %.1f MB\n", float64(first)/(1<<20), float64(last)/(1<<20))
	fmt.Fprintf(&b, "  goroutines: %d before, %d after shutdown\n", s.GoroutinesBefore, s.GoroutinesAfter)
	return b.String()
}
