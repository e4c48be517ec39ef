package queue

import (
	"math"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAddAfterReleasesInDueOrder(t *testing.T) {
	clock := newFakeClock()
	q := New[string](Options{Clock: clock})
	q.AddAfter("c", 3*time.Second)
	q.AddAfter("a", 1*time.Second)
	q.AddAfter("b", 2*time.Second)
	require.Equal(t, 0, q.Len(), "nothing is due yet")

	steps := []struct {
		step time.Duration
		want []string
	}{
		{999 * time.Millisecond, nil},
		{1 * time.Millisecond, []string{"a"}},
		{1 * time.Second, []string{"b"}},
		{5 * time.Second, []string{"c"}},
		{time.Hour, nil},
	}
	elapsed := time.Duration(0)
	for _, s := range steps {
		clock.Step(s.step)
		elapsed += s.step
		if got := drainReady(q); !equalSlices(got, s.want) {
			t.Errorf("at +%v: ready %q, want %q", elapsed, got, s.want)
		}
	}
	if got := clock.pending(); got != 0 {
		t.Errorf("%d timers still armed with an empty heap, want 0", got)
	}
}

func TestAddAfterEarliestWins(t *testing.T) {
	tests := []struct {
		name   string
		delays []time.Duration
		due    time.Duration
	}{
		{"later request ignored", []time.Duration{5 * time.Second, 10 * time.Second}, 5 * time.Second},
		{"earlier request moves it", []time.Duration{10 * time.Second, 5 * time.Second}, 5 * time.Second},
		{"many requests", []time.Duration{9 * time.Second, 3 * time.Second, 7 * time.Second, 4 * time.Second}, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			q := New[string](Options{Clock: clock})
			for _, d := range tt.delays {
				q.AddAfter("k", d)
			}
			clock.Step(tt.due - time.Nanosecond)
			require.Equal(t, 0, q.Len(), "ready before the earliest due time")
			clock.Step(time.Nanosecond)
			if got := drainReady(q); !equalSlices(got, []string{"k"}) {
				t.Fatalf("at due time: ready %q, want [k]", got)
			}
			clock.Step(time.Hour) // past every later request
			if got := drainReady(q); len(got) != 0 {
				t.Errorf("after the earliest fired: ready %q again, want nothing (one wait per key)", got)
			}
		})
	}
}

func TestAddAfterNonPositiveAddsNow(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second, math.MinInt64} {
		q := New[string](Options{Clock: newFakeClock()})
		q.AddAfter("k", d)
		if got := q.Len(); got != 1 {
			t.Errorf("AddAfter(k, %v): Len() = %d, want 1", d, got)
		}
	}
}

func TestAddAfterOfReadyKeyDedupsWhenDue(t *testing.T) {
	clock := newFakeClock()
	q := New[string](Options{Clock: clock})
	q.Add("k")
	q.AddAfter("k", time.Second)
	clock.Step(time.Second)
	if got := drainReady(q); !equalSlices(got, []string{"k"}) {
		t.Errorf("ready %q, want [k] once", got)
	}
}

func TestAddAfterWhileProcessingWaitsForDone(t *testing.T) {
	clock := newFakeClock()
	q := New[string](Options{Clock: clock})
	q.Add("k")
	k, _ := q.Get()
	q.AddAfter(k, time.Second)
	clock.Step(time.Second)
	require.Equal(t, 0, q.Len(), "due while processing: must wait for Done")
	q.Done(k)
	require.Equal(t, 1, q.Len(), "queued again at Done")
}

func TestShutDownDropsDelayedAndStopsTimer(t *testing.T) {
	clock := newFakeClock()
	q := New[string](Options{Clock: clock})
	q.AddAfter("k", time.Second)
	require.Equal(t, 1, clock.pending())
	q.ShutDown()
	if got := clock.pending(); got != 0 {
		t.Errorf("armed timers after ShutDown = %d, want 0", got)
	}
	q.AddAfter("k2", time.Second)
	clock.Step(time.Hour)
	if got := q.Len(); got != 0 {
		t.Errorf("Len() after ShutDown and the delay = %d, want 0", got)
	}
}

func TestAddAfterHugeDelaySaturates(t *testing.T) {
	clock := newFakeClock()
	q := New[string](Options{Clock: clock})
	clock.Step(time.Hour) // now > 0, so now + MaxInt64 overflows
	q.AddAfter("k", time.Duration(math.MaxInt64))
	q.mu.Lock()
	at := q.delay.heap[0].at
	q.mu.Unlock()
	if at != maxStamp {
		t.Errorf("due stamp = %d, want saturated %d", at, maxStamp)
	}
	q.AddAfter("soon", time.Second)
	clock.Step(time.Second)
	require.Equal(t, 1, q.Len(), "an earlier key still fires")
}

// With the real clock inside a synctest bubble, the delay is honoured to
// the nanosecond on the bubble's fake time.
func TestAddAfterOnRealClockInSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Options{})
		q.AddAfter("k", time.Second)
		time.Sleep(time.Second - time.Nanosecond)
		synctest.Wait()
		require.Equal(t, 0, q.Len(), "ready before its delay")
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		require.Equal(t, 1, q.Len(), "not ready after its delay")
		q.ShutDown()
	})
}

// A randomized check of the heap: keys come out in due order whatever the
// order and repetition of inserts, with the earliest time and the highest
// priority per key.
func TestDelayHeapProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		ds := delayState[int]{index: make(map[int]int)}
		earliest := map[int]stamp{}
		highest := map[int]Priority{}
		for range rng.IntN(200) {
			k, at := rng.IntN(50), stamp(rng.IntN(1000))
			p := Priority(-rng.IntN(2))
			ds.insertLocked(k, at, p)
			if old, ok := earliest[k]; !ok || at < old {
				earliest[k] = at
			}
			if old, ok := highest[k]; !ok || p > old {
				highest[k] = p
			}
		}
		require.Equal(t, len(earliest), ds.waitingLocked(), "round %d: one entry per key", round)
		last := stamp(-1)
		for ds.waitingLocked() > 0 {
			at := ds.heap[0].at
			e := ds.popLocked()
			k := e.item
			if e.prio != highest[k] {
				t.Fatalf("round %d: key %d at priority %v, want %v", round, k, e.prio, highest[k])
			}
			if at < last {
				t.Fatalf("round %d: key %d due %d came after %d", round, k, at, last)
			}
			if at != earliest[k] {
				t.Fatalf("round %d: key %d due %d, want earliest %d", round, k, at, earliest[k])
			}
			last = at
		}
		require.Empty(t, ds.index, "round %d: index not emptied", round)
	}
}
