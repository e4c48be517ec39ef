package queue

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/testutil"
)

// drainReady gets every ready key without blocking and marks it Done.
func drainReady[K comparable](q *Queue[K]) []K {
	var got []K
	for q.Len() > 0 {
		k, _ := q.Get()
		got = append(got, k)
		q.Done(k)
	}
	return got
}

func TestAddDeduplicatesAndKeepsOrder(t *testing.T) {
	tests := []struct {
		name string
		adds []string
		want []string
	}{
		{"empty", nil, nil},
		{"distinct", []string{"a", "b", "c"}, []string{"a", "b", "c"}},
		{"repeated", []string{"a", "a", "a"}, []string{"a"}},
		{"interleaved", []string{"a", "b", "a", "c", "b"}, []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := New[string](Options{})
			for _, k := range tt.adds {
				q.Add(k)
			}
			if got, want := q.Len(), len(tt.want); got != want {
				t.Fatalf("Len() = %d, want %d", got, want)
			}
			if got := drainReady(q); !equalSlices(got, tt.want) {
				t.Errorf("handed out %q, want %q", got, tt.want)
			}
		})
	}
}

func equalSlices[K comparable](a, b []K) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAddDuringProcessingRequeuesAtDone(t *testing.T) {
	q := New[string](Options{})
	q.Add("a")
	k, shutdown := q.Get()
	require.False(t, shutdown)
	require.Equal(t, "a", k)

	q.Add("a")
	q.Add("a") // still one pending re-add
	if got := q.Len(); got != 0 {
		t.Fatalf("Len() while a is processing = %d, want 0 (not handed out twice)", got)
	}
	q.Done("a")
	if got := q.Len(); got != 1 {
		t.Fatalf("Len() after Done = %d, want 1", got)
	}
	k, _ = q.Get()
	if k != "a" {
		t.Errorf("Get() = %q, want a", k)
	}
	q.Done("a")
	if got := q.Len(); got != 0 {
		t.Errorf("Len() after second Done = %d, want 0", got)
	}
}

func TestDoneOfUnknownKeyDoesNothing(t *testing.T) {
	q := New[int](Options{})
	q.Done(7)
	q.Add(1)
	q.Done(1) // ready, not processing
	if got := q.Len(); got != 1 {
		t.Errorf("Len() = %d, want 1", got)
	}
}

func TestGetBlocksUntilAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Options{})
		got := make(chan string, 1)
		go func() {
			k, _ := q.Get()
			got <- k
		}()
		synctest.Wait()
		select {
		case k := <-got:
			t.Fatalf("Get returned %q before any Add", k)
		default:
		}
		q.Add("x")
		if k := <-got; k != "x" {
			t.Errorf("Get() = %q, want x", k)
		}
		q.ShutDown()
	})
}

func TestShutDownWakesGetAndKeepsReadyKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](Options{})
		woke := make(chan bool, 1)
		go func() {
			_, shutdown := q.Get()
			woke <- shutdown
		}()
		synctest.Wait()
		q.ShutDown()
		if shutdown := <-woke; !shutdown {
			t.Fatalf("blocked Get after ShutDown: shutdown = false, want true")
		}

		q2 := New[string](Options{})
		q2.Add("a")
		q2.ShutDown()
		q2.Add("b") // ignored
		require.True(t, q2.ShuttingDown())
		k, shutdown := q2.Get()
		if k != "a" || shutdown {
			t.Errorf("Get() after ShutDown = (%q, %v), want (a, false): ready keys are still handed out", k, shutdown)
		}
		q2.Done(k)
		if _, shutdown := q2.Get(); !shutdown {
			t.Errorf("Get() on empty shut-down queue: shutdown = false, want true")
		}
	})
}

func TestShutDownWithDrain(t *testing.T) {
	t.Run("waits for Done", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := New[string](Options{})
			q.Add("a")
			k, _ := q.Get()
			result := make(chan error, 1)
			go func() { result <- q.ShutDownWithDrain(context.Background()) }()
			synctest.Wait()
			select {
			case err := <-result:
				t.Fatalf("ShutDownWithDrain returned %v while a key was in flight", err)
			default:
			}
			require.True(t, q.ShuttingDown())
			q.Done(k)
			if err := <-result; err != nil {
				t.Errorf("ShutDownWithDrain() = %v, want nil", err)
			}
		})
	})
	t.Run("bounded by context", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := New[string](Options{Name: "drainy"})
			q.Add("a")
			q.Get()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			err := q.ShutDownWithDrain(ctx)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("ShutDownWithDrain() = %v, want DeadlineExceeded", err)
			}
			require.ErrorContains(t, err, `queue "drainy"`)
			if got := time.Since(start); got != time.Minute {
				t.Errorf("returned after %v, want the context's 1m", got)
			}
		})
	})
	t.Run("nothing in flight", func(t *testing.T) {
		q := New[string](Options{})
		q.Add("ready-but-not-started")
		if err := q.ShutDownWithDrain(context.Background()); err != nil {
			t.Errorf("ShutDownWithDrain() = %v, want nil", err)
		}
	})
}

// TestNewStartsNoGoroutineAndShutDownLeavesNone uses the real clock (package
// time) inside a synctest bubble, so that synctest.Wait, not polling, lets
// a timer's goroutine finish exiting before the goroutines are counted.
func TestNewStartsNoGoroutineAndShutDownLeavesNone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := testutil.BubbleGoroutines(t)
		q := New[string](Options{})
		if got := testutil.BubbleGoroutines(t); got != base {
			t.Fatalf("goroutines after New = %d, want %d", got, base)
		}
		q.AddAfter("later", time.Hour)
		q.AddAfter("soon", time.Millisecond)
		k, _ := q.Get()
		require.Equal(t, "soon", k)
		q.Done(k)
		q.ShutDown()
		synctest.Wait()
		if got := testutil.BubbleGoroutines(t); got != base {
			buf := make([]byte, 1<<16)
			t.Fatalf("goroutines after ShutDown = %d, want %d:\n%s", got, base, buf[:runtime.Stack(buf, true)])
		}
	})
}

func TestRingGrowsAndShrinks(t *testing.T) {
	var r ring[int]
	const n = 1000
	var peak *int
	for round := range 3 {
		for i := range n {
			r.push(round*n + i)
		}
		for i := range n {
			if got, want := r.pop(), round*n+i; got != want {
				t.Fatalf("round %d: pop() = %d, want %d", round, got, want)
			}
		}
		// Swinging between empty and a peak keeps the buffer.
		if round == 0 {
			peak = &r.buf[0]
		} else if &r.buf[0] != peak {
			t.Errorf("round %d: buffer reallocated, want the peak buffer kept across swings", round)
		}
	}
	// Steady traffic at a small depth gives the memory back.
	for i := range 10000 {
		r.push(i)
		if got := r.pop(); got != i {
			t.Fatalf("pop() = %d, want %d", got, i)
		}
	}
	if got := len(r.buf); got > 4*minRing {
		t.Errorf("buffer of %d slots kept after steady small traffic, want <= %d", got, 4*minRing)
	}
	// Wrap around at a small size: the head chases the tail round the buffer.
	next, want := 0, 0
	for range 100 {
		r.push(next)
		r.push(next + 1)
		next += 2
		if got := r.pop(); got != want {
			t.Fatalf("pop() after wrapping = %d, want %d", got, want)
		}
		want++
	}
	if got := r.len(); got != 100 {
		t.Errorf("len() = %d, want 100", got)
	}
}
