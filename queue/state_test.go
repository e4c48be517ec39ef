package queue

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// stateOfKey returns the state the queue holds for k, or zero if k is
// neither ready nor being processed.
func stateOfKey[K comparable](q *Queue[K], k K) itemState {
	q.mu.Lock()
	defer q.mu.Unlock()
	i, found := q.items.find(k, q.items.hash(k))
	if !found {
		if q.low.has(k) {
			return stateQueued
		}
		return 0
	}
	return q.stateOf(q.items.mark(i))
}

// Walk one key through every transition of its state machine, with
// another key around so that tickets and hand-out counts differ.
func TestItemStateTransitions(t *testing.T) {
	q := New[string](Options{})
	want := func(k string, st itemState) {
		t.Helper()
		if got := stateOfKey(q, k); got != st {
			t.Fatalf("state of %q = %d, want %d", k, got, st)
		}
	}
	want("a", 0)
	q.Add("a") // absent -> queued
	want("a", stateQueued)
	q.Add("b")
	q.Add("a") // queued -> queued (deduplicated)
	want("a", stateQueued)
	q.Done("a") // queued: Done does nothing
	want("a", stateQueued)

	k, _ := q.Get() // queued -> processing
	require.Equal(t, "a", k)
	want("a", stateProcessing)
	want("b", stateQueued)
	q.Add("a") // processing -> requeue
	want("a", stateRequeue)
	q.Add("a") // requeue -> requeue
	want("a", stateRequeue)
	q.Done("a") // requeue -> queued, behind b
	want("a", stateQueued)
	q.Done("a") // queued again: Done does nothing
	want("a", stateQueued)

	k, _ = q.Get()
	require.Equal(t, "b", k)
	want("a", stateQueued) // handing out b does not hand out a
	k, _ = q.Get()
	require.Equal(t, "a", k)
	want("a", stateProcessing)
	q.Done("a") // processing -> absent
	want("a", 0)
	q.Done("b")
	want("b", 0)
	if q.Len() != 0 || q.items.len() != 0 {
		t.Errorf("Len() = %d, keys held = %d, want 0 and 0", q.Len(), q.items.len())
	}
}

// The queue agrees with a plain model through random Add, Get and Done
// calls from one goroutine: the same keys handed out in the same order,
// and the same state for every key after every call.
func TestQueueMatchesModel(t *testing.T) {
	const keys = 8
	rng := rand.New(rand.NewPCG(3, 4))
	q := New[int](Options{})
	model := map[int]itemState{}
	var ready []int
	for step := range 100000 {
		k := rng.IntN(keys)
		switch op := rng.IntN(3); {
		case op == 0:
			q.Add(k)
			switch model[k] {
			case 0:
				model[k] = stateQueued
				ready = append(ready, k)
			case stateProcessing:
				model[k] = stateRequeue
			}
		case op == 1 && len(ready) > 0:
			got, shutdown := q.Get()
			if shutdown || got != ready[0] {
				t.Fatalf("step %d: Get() = (%d, %v), want (%d, false)", step, got, shutdown, ready[0])
			}
			model[got] = stateProcessing
			ready = ready[1:]
		default:
			q.Done(k)
			switch model[k] {
			case stateProcessing:
				delete(model, k)
			case stateRequeue:
				model[k] = stateQueued
				ready = append(ready, k)
			}
		}
		if q.Len() != len(ready) {
			t.Fatalf("step %d: Len() = %d, want %d", step, q.Len(), len(ready))
		}
		for key := range keys {
			if got, want := stateOfKey(q, key), model[key]; got != want {
				t.Fatalf("step %d: state of %d = %d, want %d", step, key, got, want)
			}
		}
	}
}
