package backoff

import (
	"testing"
	"time"
)

func TestFailureAtDoublesCapsAndResets(t *testing.T) {
	b := New(Options{Jitter: -1})
	t0 := time.Unix(1000, 0)
	want := []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond,
		6400 * time.Millisecond, 12800 * time.Millisecond, 25600 * time.Millisecond, 30 * time.Second, 30 * time.Second}
	now := t0
	for i, w := range want {
		if got := b.FailureAt(now); got != w {
			t.Fatalf("failure %d: got %v, want %v", i, got, w)
		}
		now = now.Add(time.Second)
	}
	// Two healthy minutes later the backoff starts over.
	if got := b.FailureAt(now.Add(2 * time.Minute)); got != 800*time.Millisecond {
		t.Fatalf("after reset window: got %v, want 800ms", got)
	}
}

func TestJitterStaysWithinBound(t *testing.T) {
	b := New(Options{Initial: time.Second, Max: 4 * time.Second})
	b.SetRand(func() float64 { return 0.999 })
	now := time.Unix(0, 0)
	for i := 0; i < 10; i++ {
		got := b.FailureAt(now)
		if got > 8*time.Second {
			t.Fatalf("failure %d: got %v, above max plus full jitter", i, got)
		}
	}
	b.Reset()
	b.SetRand(func() float64 { return 0.5 })
	if got := b.FailureAt(now); got != 1500*time.Millisecond {
		t.Fatalf("after Reset: got %v, want 1.5s", got)
	}
}

func TestJittered(t *testing.T) {
	for i := 0; i < 100; i++ {
		d := Jittered(time.Minute, 0.5)
		if d < time.Minute || d > 90*time.Second {
			t.Fatalf("Jittered(1m, 0.5) = %v, outside [1m, 1m30s]", d)
		}
	}
	if got := Jittered(time.Minute, 0); got != time.Minute {
		t.Fatalf("Jittered(1m, 0) = %v", got)
	}
}
