package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kwatch/kwatch/metrics"

	"github.com/stretchr/testify/require"
)

// Normal keys go first; a low key re-added at normal priority while it
// waits moves up; a normal re-add of a low key being processed makes Done
// queue it at normal priority.
func TestPriorityOrder(t *testing.T) {
	q := New[string](Options{})
	q.AddWith("low1", AddOptions{Priority: PriorityLow})
	q.AddWith("low2", AddOptions{Priority: PriorityLow})
	q.Add("n1")
	q.AddWith("n1", AddOptions{Priority: PriorityLow}) // waiting at normal: stays
	q.Add("low2")                                      // moves up, behind n1
	q.AddWith("low1", AddOptions{Priority: PriorityLow})
	require.Equal(t, 3, q.Len())

	var got []string
	var prios []Priority
	for range 3 {
		k, p, _ := q.GetWithPriority()
		got, prios = append(got, k), append(prios, p)
	}
	require.Equal(t, []string{"n1", "low2", "low1"}, got)
	require.Equal(t, []Priority{PriorityNormal, PriorityNormal, PriorityLow}, prios)

	// low1 is being processed: a low re-add then a normal one requeue it
	// at normal priority; n1's low re-add requeues it low.
	q.AddWith("low1", AddOptions{Priority: PriorityLow})
	q.Add("low1")
	q.AddWith("n1", AddOptions{Priority: PriorityLow})
	q.Done("n1")
	q.Done("low1")
	q.Done("low2")
	k, p, _ := q.GetWithPriority()
	require.Equal(t, "low1", k)
	require.Equal(t, PriorityNormal, p)
	k, p, _ = q.GetWithPriority()
	require.Equal(t, "n1", k)
	require.Equal(t, PriorityLow, p)
	q.Done("low1")
	q.Done("n1")
	require.Equal(t, 0, q.Len())
	require.Equal(t, 0, q.items.len())
}

// A constant stream of normal keys, faster than the workers can reconcile
// them, cannot keep a low key waiting past DefaultMaxLowWait (plus one
// reconcile, which a worker may be in when the key ages). Without aging
// the low key would wait until the stream stops.
func TestLowPriorityAgesUnderNormalStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			workers = 2
			work    = 10 * time.Millisecond // each reconcile
			every   = 2 * time.Millisecond  // a new normal key: 2.5 times the workers' rate
			stream  = 3 * DefaultMaxLowWait
		)
		var mu sync.Mutex
		var lowStarted time.Time
		r, err := NewRunner(RunnerOptions[string]{
			Workers: workers,
			Logger:  slog.New(slog.DiscardHandler),
			Reconcile: func(ctx context.Context, key string) (Result, error) {
				if key == "low" {
					mu.Lock()
					lowStarted = time.Now()
					mu.Unlock()
				}
				time.Sleep(work)
				return Result{}, nil
			},
		})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()

		for i := range 100 { // a backlog before the low key
			r.Add(fmt.Sprint("n", i))
		}
		added := time.Now()
		r.AddWith("low", AddOptions{Priority: PriorityLow})
		for i := 100; time.Since(added) < stream; i++ {
			r.Add(fmt.Sprint("n", i))
			time.Sleep(every)
		}
		synctest.Wait()
		mu.Lock()
		started := lowStarted
		mu.Unlock()
		require.False(t, started.IsZero(), "the low key was never reconciled while normal keys kept coming")
		waited := started.Sub(added)
		require.LessOrEqual(t, waited, DefaultMaxLowWait+work, "low key waited %v", waited)
		require.GreaterOrEqual(t, waited, DefaultMaxLowWait, "low key went before the normal backlog after %v", waited)
		require.Positive(t, r.Queue().Len(), "the stream did not outrun the workers")
		cancel()
		require.NoError(t, <-done)
	})
}

// A key keeps the priority it was handed out at across an error retry and
// a RequeueAfter: the low key, due again while a normal key is being
// reconciled, goes after a normal key that was added later than it.
func TestPrioritySurvivesRequeues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first func() (Result, error)
	}{
		{"error backoff", func() (Result, error) { return Result{}, errors.New("transient") }},
		{"RequeueAfter", func() (Result, error) { return Result{RequeueAfter: 5 * time.Millisecond}, nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { checkPriorityKept(t, tc.first) })
		})
	}
}

func checkPriorityKept(t *testing.T, first func() (Result, error)) {
	var mu sync.Mutex
	var order []string
	var r *Runner[string]
	calls := 0
	r, err := NewRunner(RunnerOptions[string]{
		Logger: slog.New(slog.DiscardHandler),
		Reconcile: func(ctx context.Context, key string) (Result, error) {
			mu.Lock()
			order = append(order, key)
			mu.Unlock()
			switch key {
			case "low":
				if calls++; calls == 1 {
					r.Add("busy") // keeps the one worker busy while low is due
					return first()
				}
			case "busy":
				time.Sleep(20 * time.Millisecond) // low is due again at 5ms (backoff or RequeueAfter)...
				r.Add("later")                    // ...before this normal key
				time.Sleep(80 * time.Millisecond)
			}
			return Result{}, nil
		},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	r.AddWith("low", AddOptions{Priority: PriorityLow})
	time.Sleep(time.Second)
	synctest.Wait()
	cancel()
	require.NoError(t, <-done)
	require.Equal(t, []string{"low", "busy", "later", "low"}, order)
}

// modelQueue is the plain model of a two-lane queue that the randomized
// test checks Queue against.
type modelQueue struct {
	state   map[int]itemState
	prio    map[int]Priority // queued: its lane; requeue: the lane Done uses
	normal  []int
	low     []int
	lowAt   map[int]time.Time
	maxWait time.Duration
}

func (m *modelQueue) add(k int, p Priority, now time.Time) {
	switch m.state[k] {
	case 0:
		m.state[k], m.prio[k] = stateQueued, p
		m.push(k, p, now)
	case stateQueued:
		if m.prio[k] == PriorityLow && p == PriorityNormal {
			m.low = remove(m.low, k)
			m.prio[k] = PriorityNormal
			m.normal = append(m.normal, k)
		}
	case stateProcessing:
		m.state[k], m.prio[k] = stateRequeue, p
	case stateRequeue:
		m.prio[k] = max(m.prio[k], p)
	}
}

func (m *modelQueue) push(k int, p Priority, now time.Time) {
	if p == PriorityLow {
		m.low, m.lowAt[k] = append(m.low, k), now
	} else {
		m.normal = append(m.normal, k)
	}
}

func (m *modelQueue) get(now time.Time) (int, Priority, bool) {
	switch {
	case len(m.low) > 0 && (len(m.normal) == 0 || now.Sub(m.lowAt[m.low[0]]) >= m.maxWait):
		k := m.low[0]
		m.low = m.low[1:]
		m.state[k] = stateProcessing
		return k, PriorityLow, true
	case len(m.normal) > 0:
		k := m.normal[0]
		m.normal = m.normal[1:]
		m.state[k] = stateProcessing
		return k, PriorityNormal, true
	}
	return 0, 0, false
}

func (m *modelQueue) done(k int, now time.Time) {
	switch m.state[k] {
	case stateProcessing:
		delete(m.state, k)
	case stateRequeue:
		m.state[k] = stateQueued
		m.push(k, m.prio[k], now)
	}
}

func remove(s []int, k int) []int {
	for i, x := range s {
		if x == k {
			return append(s[:i:i], s[i+1:]...)
		}
	}
	return s
}

// The queue agrees with the two-lane model through random adds at both
// priorities, gets, dones and steps of time: the same keys handed out in
// the same order at the same priority, the same length and the same state
// for every key. Every key is in exactly one place, and the low lane's
// FIFO stays within its compaction bound.
func TestPriorityQueueMatchesModel(t *testing.T) {
	const keys = 12
	rng := rand.New(rand.NewPCG(5, 6))
	clock := newFakeClock()
	maxWait := 50 * time.Millisecond
	q := New[int](Options{Clock: clock, MaxLowWait: maxWait})
	m := &modelQueue{state: map[int]itemState{}, prio: map[int]Priority{}, lowAt: map[int]time.Time{}, maxWait: maxWait}
	for step := range 50000 {
		k := rng.IntN(keys)
		switch op := rng.IntN(10); {
		case op < 2:
			q.Add(k)
			m.add(k, PriorityNormal, clock.Now())
		case op < 4:
			q.AddWith(k, AddOptions{Priority: PriorityLow})
			m.add(k, PriorityLow, clock.Now())
		case op < 6:
			wk, wp, ok := m.get(clock.Now())
			if !ok {
				continue
			}
			gk, gp, shutdown := q.GetWithPriority()
			if shutdown || gk != wk || gp != wp {
				t.Fatalf("step %d: GetWithPriority() = (%d, %v, %v), want (%d, %v, false)", step, gk, gp, shutdown, wk, wp)
			}
		case op < 8:
			q.Done(k)
			m.done(k, clock.Now())
		default:
			clock.Step(time.Duration(rng.IntN(20)) * time.Millisecond)
		}
		checkAgainstModel(t, step, q, m, keys)
	}
}

func checkAgainstModel(t *testing.T, step int, q *Queue[int], m *modelQueue, keys int) {
	t.Helper()
	if got, want := q.Len(), len(m.normal)+len(m.low); got != want {
		t.Fatalf("step %d: Len() = %d, want %d", step, got, want)
	}
	q.mu.Lock()
	inItems, inLow := q.items.len(), q.low.len()
	fifo := q.low.fifo.len()
	q.mu.Unlock()
	if inItems+inLow != len(m.state) {
		t.Fatalf("step %d: %d keys in items and %d in the low lane, want %d in all", step, inItems, inLow, len(m.state))
	}
	if fifo > 2*inLow+minRing {
		t.Fatalf("step %d: low FIFO holds %d entries for %d keys", step, fifo, inLow)
	}
	for key := range keys {
		if got, want := stateOfKey(q, key), m.state[key]; got != want {
			t.Fatalf("step %d: state of %d = %d, want %d", step, key, got, want)
		}
	}
}

// Depth and wait are split by priority; a key that moved up counts as
// normal.
func TestPriorityMetrics(t *testing.T) {
	clock := newFakeClock()
	reg := metrics.NewSet()
	q := New[string](Options{Name: "q", Clock: clock, Metrics: reg})
	q.AddWith("a", AddOptions{Priority: PriorityLow})
	q.AddWith("b", AddOptions{Priority: PriorityLow})
	q.Add("c")
	m := samples(t, reg)
	require.Equal(t, 2.0, m[MetricPriorityDepth+`{name="q",priority="low"}`])
	require.Equal(t, 1.0, m[MetricPriorityDepth+`{name="q",priority="normal"}`])
	require.Equal(t, 3.0, m[MetricDepth+`{name="q"}`])

	q.Add("b") // moves up
	clock.Step(2 * time.Second)
	for range 3 {
		q.Get()
	}
	m = samples(t, reg)
	require.Equal(t, 0.0, m[MetricPriorityDepth+`{name="q",priority="low"}`])
	require.Equal(t, 0.0, m[MetricPriorityDepth+`{name="q",priority="normal"}`])
	require.Equal(t, 1.0, m[MetricPriorityWait+`_count{name="q",priority="low"}`])
	require.Equal(t, 2.0, m[MetricPriorityWait+`_sum{name="q",priority="low"}`])
	require.Equal(t, 2.0, m[MetricPriorityWait+`_count{name="q",priority="normal"}`])
	require.Equal(t, 4.0, m[MetricPriorityWait+`_sum{name="q",priority="normal"}`])
}

// A burst of low keys (an initial list) does not keep the lane's storage
// once it has drained, whether its keys were handed out or moved up; the
// lane still keeps order after it, and a small lane keeps its storage.
func TestLowLaneReleasesABurst(t *testing.T) {
	const burst = 10000
	q := New[int](Options{})
	defer q.ShutDown()
	for k := range burst {
		q.AddWith(k, AddOptions{Priority: PriorityLow})
	}
	for k := range burst / 2 {
		q.Add(k) // moves up: its low entry goes stale
	}
	for want := range burst {
		k, p, shutdown := q.GetWithPriority()
		require.False(t, shutdown)
		require.Equal(t, want, k, "normal keys first, then the low ones in order")
		require.Equal(t, want >= burst/2, p == PriorityLow, "key %d", k)
		q.Done(k)
	}
	q.mu.Lock()
	index, buf := q.low.index, len(q.low.fifo.buf)
	q.mu.Unlock()
	require.Nil(t, index, "the drained lane's map is released")
	require.Zero(t, buf, "the drained lane's ring is released")

	for k := range 3 {
		q.AddWith(burst+k, AddOptions{Priority: PriorityLow})
	}
	for want := burst; want < burst+3; want++ {
		k, p, _ := q.GetWithPriority()
		require.Equal(t, want, k)
		require.Equal(t, PriorityLow, p)
		q.Done(k)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	require.NotNil(t, q.low.index, "a lane that stayed small keeps its map")
	require.NotZero(t, len(q.low.fifo.buf), "and its ring")
}
