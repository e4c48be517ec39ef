package queue

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// Many producers and workers hammer a few keys. Each worker records how
// many workers hold a key at once (never more than one), and every add is
// followed by a processing of its key that starts after it.
func TestStressNoKeyHandedToTwoWorkers(t *testing.T) {
	const (
		keys      = 32
		producers = 4
		workers   = 16
		addsEach  = 5000
	)
	q := New[int](Options{})
	var (
		holders   [keys]atomic.Int32
		addGen    [keys]atomic.Int64 // bumped before each Add
		seenGen   [keys]atomic.Int64 // addGen as read when processing started
		overlap   atomic.Int64
		processed atomic.Int64
	)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				if holders[k].Add(1) != 1 {
					overlap.Add(1)
				}
				seenGen[k].Store(addGen[k].Load())
				processed.Add(1)
				holders[k].Add(-1)
				q.Done(k)
			}
		})
	}
	var prod sync.WaitGroup
	for p := range producers {
		prod.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(p), 99))
			for range addsEach {
				k := rng.IntN(keys)
				addGen[k].Add(1)
				q.Add(k)
			}
		})
	}
	prod.Wait()
	q.ShutDown() // ready and re-added keys are still handed out
	wg.Wait()

	require.Zero(t, overlap.Load(), "a key was held by two workers at once")
	for k := range keys {
		if got, want := seenGen[k].Load(), addGen[k].Load(); got != want {
			t.Errorf("key %d: last processing saw add #%d, want the last add #%d", k, got, want)
		}
	}
	t.Logf("%d adds, %d processings", producers*addsEach, processed.Load())
}
