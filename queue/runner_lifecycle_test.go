package queue

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/testutil"
)

func TestRunnerDrainsInFlightWorkAndDropsTheRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		rec := newRecorder()
		var ctxEnded atomic.Bool
		r, err := NewRunner(RunnerOptions[string]{
			Reconcile: func(ctx context.Context, key string) (Result, error) {
				rec.record(key)
				if key == "slow" {
					<-release
					ctxEnded.Store(ctx.Err() != nil)
				}
				return Result{}, nil
			},
		})
		require.NoError(t, err)
		r.Add("slow")
		r.Add("queued")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		synctest.Wait() // slow is in flight, queued waits behind it
		cancel()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Run returned %v while a reconcile was in flight", err)
		default:
		}
		close(release)
		if err := <-done; err != nil {
			t.Errorf("Run() = %v, want nil after a clean drain", err)
		}
		require.False(t, ctxEnded.Load(), "reconcile context must stay live during the drain")
		if keys, _ := rec.calls(); !equalSlices(keys, []string{"slow"}) {
			t.Errorf("reconciled %q, want [slow]: keys not started at stop are dropped", keys)
		}
	})
}

func TestRunnerDrainTimeoutCancelsReconciles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started := make(chan struct{})
		r, err := NewRunner(RunnerOptions[string]{
			DrainTimeout: 10 * time.Second,
			Reconcile: func(ctx context.Context, _ string) (Result, error) {
				close(started)
				<-ctx.Done()
				return Result{}, ctx.Err()
			},
		})
		require.NoError(t, err)
		r.Add("stuck")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		<-started
		cancel()
		begin := time.Now()
		err = <-done
		if !errors.Is(err, ErrDrainTimeout) {
			t.Fatalf("Run() = %v, want ErrDrainTimeout", err)
		}
		if got := time.Since(begin); got != 10*time.Second {
			t.Errorf("Run returned %v after cancel, want the 10s drain timeout", got)
		}
	})
}

func TestRunnerRunsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := NewRunner(RunnerOptions[int]{Reconcile: func(context.Context, int) (Result, error) { return Result{}, nil }})
		require.NoError(t, err)
		stop := startRunner(r)
		synctest.Wait()
		if err := r.Run(context.Background()); !errors.Is(err, ErrAlreadyStarted) {
			t.Errorf("second Run() = %v, want ErrAlreadyStarted", err)
		}
		require.NoError(t, stop())
	})
}

func TestRunnerReturnsWhenQueueShutDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := NewRunner(RunnerOptions[int]{Workers: 2, Reconcile: func(context.Context, int) (Result, error) { return Result{}, nil }})
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- r.Run(context.Background()) }()
		synctest.Wait()
		r.Queue().ShutDown()
		require.NoError(t, <-done)
	})
}

func TestNewRunnerRejectsBadOptions(t *testing.T) {
	ok := func(context.Context, int) (Result, error) { return Result{}, nil }
	tests := []struct {
		name  string
		opts  RunnerOptions[int]
		field string
	}{
		{"no reconcile", RunnerOptions[int]{}, "RunnerOptions.Reconcile"},
		{"negative workers", RunnerOptions[int]{Reconcile: ok, Workers: -1}, "RunnerOptions.Workers"},
		{"negative drain", RunnerOptions[int]{Reconcile: ok, DrainTimeout: -time.Second}, "RunnerOptions.DrainTimeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewRunner(tt.opts)
			var oe *OptionError
			require.True(t, errors.As(err, &oe), "error %v is not an *OptionError", err)
			if oe.Field != tt.field {
				t.Errorf("OptionError.Field = %q, want %q", oe.Field, tt.field)
			}
			require.ErrorContains(t, err, tt.field)
		})
	}
}

// The real clock (package time) inside a synctest bubble: after Run
// returns, the bubble's goroutine count is back where it started. The
// bubble lets synctest.Wait, not polling, wait for exiting goroutines.
func TestRunnerLeavesNoGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := testutil.BubbleGoroutines(t)
		var done sync.WaitGroup
		done.Add(100)
		r, err := NewRunner(RunnerOptions[string]{
			Workers: 4,
			Reconcile: func(_ context.Context, key string) (Result, error) {
				if key == "retry" {
					return Result{RequeueAfter: time.Hour}, nil // leaves a timer armed
				}
				done.Done()
				return Result{}, nil
			},
		})
		require.NoError(t, err)
		if got := testutil.BubbleGoroutines(t); got != base {
			t.Fatalf("goroutines after NewRunner = %d, want %d", got, base)
		}
		r.Add("retry")
		for i := range 100 {
			r.Add(strconv.Itoa(i))
		}
		stop := startRunner(r)
		done.Wait()
		require.NoError(t, stop())
		synctest.Wait()
		if got := testutil.BubbleGoroutines(t); got != base {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines after Run returned = %d, want %d:\n%s", got, base, buf[:runtime.Stack(buf, true)])
		}
	})
}

func TestRunnerAddIsSafeFromManyGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		seen := map[int]int{}
		r, err := NewRunner(RunnerOptions[int]{
			Workers: 4,
			Reconcile: func(_ context.Context, key int) (Result, error) {
				mu.Lock()
				seen[key]++
				mu.Unlock()
				return Result{}, nil
			},
		})
		require.NoError(t, err)
		var adders sync.WaitGroup
		for g := range 8 {
			adders.Go(func() {
				for i := range 100 {
					r.Add((g*37 + i) % 200)
				}
			})
		}
		adders.Wait()
		stop := startRunner(r)
		synctest.Wait()
		require.NoError(t, stop())
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, seen, 200)
		for k, n := range seen {
			if n != 1 {
				t.Errorf("key %d reconciled %d times, want 1 (added only before Run)", k, n)
			}
		}
	})
}
