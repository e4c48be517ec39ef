package queue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kwatch/kwatch/metrics"
	"github.com/stretchr/testify/require"
)

// recorder is a reconcile function's journal: the keys it saw and when.
type recorder struct {
	mu    sync.Mutex
	start time.Time
	keys  []string
	at    []time.Duration
}

func newRecorder() *recorder { return &recorder{start: time.Now()} }

func (r *recorder) record(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys = append(r.keys, key)
	r.at = append(r.at, time.Since(r.start))
	return len(r.keys)
}

func (r *recorder) calls() ([]string, []time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.keys), slices.Clone(r.at)
}

// syncBuffer is a log sink safe for concurrent writes and reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startRunner runs r in a goroutine; stop cancels it and returns Run's error.
func startRunner[K comparable](r *Runner[K]) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return func() error {
		cancel()
		return <-done
	}
}

func TestRunnerReconcilesKeysAddedBeforeRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		reg := metrics.NewSet()
		r, err := NewRunner(RunnerOptions[string]{
			Reconcile: func(_ context.Context, key string) (Result, error) { rec.record(key); return Result{}, nil },
			Queue:     RateLimitedOptions[string]{Options: Options{Name: "pods", Metrics: reg}},
		})
		require.NoError(t, err)
		for _, k := range []string{"a", "b", "a"} {
			r.Add(k)
		}
		stop := startRunner(r)
		synctest.Wait()
		if keys, _ := rec.calls(); !equalSlices(keys, []string{"a", "b"}) {
			t.Errorf("reconciled %q, want [a b]", keys)
		}
		require.NoError(t, stop())
		m := samples(t, reg)
		if got := m[MetricReconcile+`{name="pods",result="success"}`]; got != 2 {
			t.Errorf("success count = %v, want 2", got)
		}
		r.Add("after") // ignored once Run returned; must not panic
		require.Equal(t, 0, r.Queue().Len())
	})
}

func TestRunnerOutcomes(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		// results[i] is what the i-th call returns; past the end: success.
		results  []func() (Result, error)
		wantAt   []time.Duration // call times since start
		wantStat string          // result label counted for the first call
	}{
		{"errors back off exponentially",
			[]func() (Result, error){
				func() (Result, error) { return Result{}, boom },
				func() (Result, error) { return Result{}, boom },
				func() (Result, error) { return Result{}, boom },
			},
			[]time.Duration{0, 5 * time.Millisecond, 15 * time.Millisecond, 35 * time.Millisecond}, resultError},
		{"requeue after a delay",
			[]func() (Result, error){func() (Result, error) { return Result{RequeueAfter: time.Minute}, nil }},
			[]time.Duration{0, time.Minute}, resultRequeue},
		{"requeue rate-limited",
			[]func() (Result, error){
				func() (Result, error) { return Result{Requeue: true}, nil },
				func() (Result, error) { return Result{Requeue: true}, nil },
			},
			[]time.Duration{0, 5 * time.Millisecond, 15 * time.Millisecond}, resultRequeue},
		{"error wins over a result",
			[]func() (Result, error){func() (Result, error) { return Result{RequeueAfter: time.Hour}, boom }},
			[]time.Duration{0, 5 * time.Millisecond}, resultError},
		{"panic is recovered and retried",
			[]func() (Result, error){func() (Result, error) { panic("kaboom") }},
			[]time.Duration{0, 5 * time.Millisecond}, resultPanic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := newRecorder()
				reg := metrics.NewSet()
				r, err := NewRunner(RunnerOptions[string]{
					Reconcile: func(_ context.Context, key string) (Result, error) {
						if n := rec.record(key); n <= len(tt.results) {
							return tt.results[n-1]()
						}
						return Result{}, nil
					},
					Queue:  RateLimitedOptions[string]{Options: Options{Name: "q", Metrics: reg}},
					Logger: slog.New(slog.DiscardHandler),
				})
				require.NoError(t, err)
				r.Add("k")
				stop := startRunner(r)
				time.Sleep(2 * time.Hour)
				synctest.Wait()
				if _, at := rec.calls(); !equalSlices(at, tt.wantAt) {
					t.Errorf("calls at %v, want %v", at, tt.wantAt)
				}
				require.Equal(t, 0, r.Queue().NumRequeues("k"), "success must forget the key's backoff")
				require.NoError(t, stop())
				m := samples(t, reg)
				if got := m[fmt.Sprintf(`%s{name="q",result="%s"}`, MetricReconcile, tt.wantStat)]; got < 1 {
					t.Errorf("%s result count = %v, want >= 1", tt.wantStat, got)
				}
				if got := m[fmt.Sprintf(`%s{name="q",result="success"}`, MetricReconcile)]; got != 1 {
					t.Errorf("success count = %v, want 1", got)
				}
			})
		})
	}
}

func TestRunnerLogsPanicWithKeyAndStack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncBuffer
		reg := metrics.NewSet()
		calls := 0
		r, err := NewRunner(RunnerOptions[string]{
			Reconcile: func(context.Context, string) (Result, error) {
				calls++
				if calls == 1 {
					var m map[string]int
					m["x"] = 1 // a real runtime panic: assignment to a nil map
				}
				return Result{}, nil
			},
			Queue:  RateLimitedOptions[string]{Options: Options{Name: "pods", Metrics: reg}},
			Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		})
		require.NoError(t, err)
		r.Add("ns/broken")
		stop := startRunner(r)
		time.Sleep(time.Second)
		synctest.Wait()
		require.NoError(t, stop())
		out := logs.String()
		for _, want := range []string{"reconcile panicked", "key=ns/broken", "assignment to entry in nil map", "runner_test.go", "queue=pods"} {
			require.Contains(t, out, want)
		}
		require.Equal(t, 2, calls, "the panicking key is retried")
		m := samples(t, reg)
		require.Equal(t, 1.0, m[MetricReconcilePanics+`{name="pods"}`])
	})
}

func TestRunnerRunsWorkersConcurrently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var mu sync.Mutex
		inFlight, most := 0, 0
		r, err := NewRunner(RunnerOptions[int]{
			Workers: 3,
			Reconcile: func(context.Context, int) (Result, error) {
				mu.Lock()
				inFlight++
				most = max(most, inFlight)
				mu.Unlock()
				<-release
				mu.Lock()
				inFlight--
				mu.Unlock()
				return Result{}, nil
			},
		})
		require.NoError(t, err)
		for i := range 5 {
			r.Add(i)
		}
		stop := startRunner(r)
		synctest.Wait()
		mu.Lock()
		require.Equal(t, 3, most, "in flight at once with 3 workers")
		mu.Unlock()
		close(release)
		synctest.Wait()
		require.NoError(t, stop())
	})
}

func TestRunnerAddAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newRecorder()
		r, err := NewRunner(RunnerOptions[string]{
			Reconcile: func(_ context.Context, key string) (Result, error) { rec.record(key); return Result{}, nil },
		})
		require.NoError(t, err)
		r.AddAfter("later", time.Minute)
		stop := startRunner(r)
		time.Sleep(time.Hour)
		synctest.Wait()
		keys, at := rec.calls()
		if !equalSlices(keys, []string{"later"}) || !equalSlices(at, []time.Duration{time.Minute}) {
			t.Errorf("reconciled %q at %v, want [later] at [1m0s]", keys, at)
		}
		require.NoError(t, stop())
	})
}
