package metrics

import (
	"math"
	"sort"
	"sync/atomic"
)

// atomicFloat is a float64 updated with compare-and-swap. The zero value
// is 0.
type atomicFloat struct{ bits atomic.Uint64 }

func (f *atomicFloat) load() float64   { return math.Float64frombits(f.bits.Load()) }
func (f *atomicFloat) store(v float64) { f.bits.Store(math.Float64bits(v)) }

func (f *atomicFloat) add(v float64) {
	for {
		old := f.bits.Load()
		next := math.Float64bits(math.Float64frombits(old) + v)
		if f.bits.CompareAndSwap(old, next) {
			return
		}
	}
}

// counterSeries is the Counter of a Set.
type counterSeries struct{ s *series }

func (c *counterSeries) Inc() { c.s.value.add(1) }

// Add adds v; a negative or NaN v is ignored, since a counter only grows.
func (c *counterSeries) Add(v float64) {
	if v > 0 {
		c.s.value.add(v)
	}
}

// gaugeSeries is the Gauge of a Set.
type gaugeSeries struct{ s *series }

func (g *gaugeSeries) Set(v float64) { g.s.value.store(v) }
func (g *gaugeSeries) Inc()          { g.s.value.add(1) }
func (g *gaugeSeries) Dec()          { g.s.value.add(-1) }
func (g *gaugeSeries) Add(v float64) { g.s.value.add(v) }

// histogram is the Histogram of a Set. counts[i] counts observations
// v with bounds[i-1] < v <= bounds[i]; the last slot counts those above
// every bound (and NaN).
type histogram struct {
	bounds []float64
	counts []atomic.Uint64 // len(bounds)+1
	sum    atomicFloat
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

// Observe records v.
func (h *histogram) Observe(v float64) {
	h.counts[sort.SearchFloat64s(h.bounds, v)].Add(1)
	h.sum.add(v)
}

// snapshot returns the cumulative bucket counts (the last one is +Inf and
// equals the count) and the sum. Reading each slot once keeps the buckets
// and the count consistent with each other even while Observe runs.
func (h *histogram) snapshot() (cumulative []uint64, sum float64) {
	cumulative = make([]uint64, len(h.counts))
	var total uint64
	for i := range h.counts {
		total += h.counts[i].Load()
		cumulative[i] = total
	}
	return cumulative, h.sum.load()
}
