package queue

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kwatch/kwatch/metrics"
)

// The queue agrees with the two-lane model through bursts that grow the
// low lane well past keptLow and drain it again, many times over: each
// round queues most keys low (a relist), moves some up, hands keys out and
// finishes them, then drains both lanes, while keys being processed are
// re-added at either priority. The lane must give its storage back at the
// end of a burst and keep order, aging, dedup and the per-lane depth
// gauges right across every release. A last burst is cut short by
// ShutDown: the keys still queued are handed out, then shutdown.
func TestLowLaneBurstsMatchModel(t *testing.T) {
	const keys = 700
	rng := rand.New(rand.NewPCG(11, 12))
	clock := newFakeClock()
	maxWait := 50 * time.Millisecond
	reg := metrics.NewSet()
	q := New[int](Options{Name: "q", Clock: clock, MaxLowWait: maxWait, Metrics: reg})
	m := &modelQueue{state: map[int]itemState{}, prio: map[int]Priority{}, lowAt: map[int]time.Time{}, maxWait: maxWait}
	var processing []int // keys handed out and not yet Done, in the model
	releases, step := 0, 0

	get := func() bool {
		wk, wp, ok := m.get(clock.Now())
		if !ok {
			return false
		}
		gk, gp, shutdown := q.GetWithPriority()
		if shutdown || gk != wk || gp != wp {
			t.Fatalf("step %d: GetWithPriority() = (%d, %v, %v), want (%d, %v, false)", step, gk, gp, shutdown, wk, wp)
		}
		processing = append(processing, gk)
		return true
	}
	done := func() {
		if len(processing) == 0 || rng.IntN(8) == 0 {
			k := rng.IntN(keys) // usually not being processed: a no-op
			q.Done(k)
			m.done(k, clock.Now())
			if i := indexOf(processing, k); i >= 0 {
				processing = append(processing[:i], processing[i+1:]...)
			}
			return
		}
		i := rng.IntN(len(processing))
		k := processing[i]
		processing = append(processing[:i], processing[i+1:]...)
		q.Done(k)
		m.done(k, clock.Now())
	}
	add := func(k int, p Priority) {
		q.AddWith(k, AddOptions{Priority: p})
		m.add(k, p, clock.Now())
	}
	wasBig := false
	check := func(full bool) {
		t.Helper()
		q.mu.Lock()
		index, buf := q.low.index, len(q.low.fifo.buf)
		q.mu.Unlock()
		if len(index) == 0 && buf > keptLow {
			t.Fatalf("step %d: the empty low lane keeps a ring of %d", step, buf)
		}
		if buf > keptLow {
			wasBig = true
		}
		if wasBig && index == nil {
			releases++
			wasBig = false
		}
		if full || step%61 == 0 {
			checkAgainstModel(t, step, q, m, keys)
			checkLaneDepth(t, step, reg, m)
		} else if got, want := q.Len(), len(m.normal)+len(m.low); got != want {
			t.Fatalf("step %d: Len() = %d, want %d", step, got, want)
		}
	}

	for round := range 12 {
		// The burst: most keys low, in a random order, with the traffic
		// of a running controller in between.
		for _, k := range rng.Perm(keys)[:keys-rng.IntN(keys/4)] {
			step++
			add(k, PriorityLow)
			switch op := rng.IntN(20); {
			case op < 2:
				add(rng.IntN(keys), PriorityNormal) // often a low key: moves up
			case op < 4:
				get()
			case op < 6:
				done()
			case op < 7:
				clock.Step(time.Duration(rng.IntN(20)) * time.Millisecond)
			}
			check(false)
		}
		check(true)
		// Some rounds move most of the burst up before handing it out, so
		// that the lane empties by moves, not by gets.
		if round%3 == 1 {
			for _, k := range rng.Perm(keys) {
				step++
				add(k, PriorityNormal)
				check(false)
			}
		}
		// The drain, with re-adds of processed keys at either priority.
		for len(m.state) > 0 {
			step++
			switch op := rng.IntN(20); {
			case op < 8:
				if !get() {
					done()
				}
			case op < 15:
				done()
			case op < 16:
				add(rng.IntN(keys), PriorityLow)
			case op < 17:
				add(rng.IntN(keys), PriorityNormal)
			case op < 18:
				clock.Step(time.Duration(rng.IntN(40)) * time.Millisecond)
			default:
				for _, k := range processing {
					q.Done(k)
					m.done(k, clock.Now())
				}
				processing = processing[:0]
			}
			check(false)
		}
		check(true)
		q.mu.Lock()
		index, fifo := q.low.index, q.low.fifo.len()
		q.mu.Unlock()
		if index != nil && len(index) != 0 || fifo > minRing {
			t.Fatalf("round %d: drained lane holds %d keys and %d FIFO entries", round, len(index), fifo)
		}
	}
	if releases < 6 {
		t.Fatalf("the lane gave its storage back %d times in 12 bursts", releases)
	}
	t.Logf("%d releases in 12 bursts, %d steps", releases, step)

	// A burst cut short by ShutDown: what is queued is still handed out,
	// in the model's order, then Get reports shutdown.
	for _, k := range rng.Perm(keys) {
		step++
		add(k, Priority(-rng.IntN(2)))
		if rng.IntN(4) == 0 {
			get()
		}
	}
	q.ShutDown()
	q.Add(keys + 1) // ignored
	for get() {
		step++
		if rng.IntN(2) == 0 {
			done()
		}
	}
	if _, _, shutdown := q.GetWithPriority(); !shutdown {
		t.Fatal("Get after the drain did not report shutdown")
	}
}

// checkLaneDepth compares the per-lane depth gauges with the model.
func checkLaneDepth(t *testing.T, step int, reg *metrics.Set, m *modelQueue) {
	t.Helper()
	s := samples(t, reg)
	for _, c := range []struct {
		lane string
		want int
	}{{"low", len(m.low)}, {"normal", len(m.normal)}} {
		name := fmt.Sprintf(`%s{name="q",priority=%q}`, MetricPriorityDepth, c.lane)
		if got := s[name]; got != float64(c.want) {
			t.Fatalf("step %d: %s = %v, want %d", step, name, got, c.want)
		}
	}
	if got, want := s[MetricDepth+`{name="q"}`], float64(len(m.low)+len(m.normal)); got != want {
		t.Fatalf("step %d: depth = %v, want %v", step, got, want)
	}
}

func indexOf(s []int, k int) int {
	for i, x := range s {
		if x == k {
			return i
		}
	}
	return -1
}
