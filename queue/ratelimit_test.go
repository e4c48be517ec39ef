package queue

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBackoffFor(t *testing.T) {
	const maxInt64 = time.Duration(math.MaxInt64)
	tests := []struct {
		base, max time.Duration
		n         int
		want      time.Duration
	}{
		{5 * time.Millisecond, 1000 * time.Second, 0, 5 * time.Millisecond},
		{5 * time.Millisecond, 1000 * time.Second, 1, 10 * time.Millisecond},
		{5 * time.Millisecond, 1000 * time.Second, 10, 5120 * time.Millisecond},
		{5 * time.Millisecond, 1000 * time.Second, 17, 655360 * time.Millisecond},
		{5 * time.Millisecond, 1000 * time.Second, 18, 1000 * time.Second}, // 1310.72s capped
		{5 * time.Millisecond, 1000 * time.Second, 40, 1000 * time.Second}, // shift overflows int64
		{5 * time.Millisecond, 1000 * time.Second, 63, 1000 * time.Second},
		{5 * time.Millisecond, 1000 * time.Second, 1 << 40, 1000 * time.Second},
		{5 * time.Millisecond, 1000 * time.Second, math.MaxInt, 1000 * time.Second},
		{1, maxInt64, 62, 1 << 62},
		{3, maxInt64, 62, maxInt64}, // 3<<62 loses bits
		{1, maxInt64, 63, maxInt64},
		{0, time.Second, 5, 0},
	}
	for _, tt := range tests {
		if got := backoffFor(tt.base, tt.max, tt.n); got != tt.want {
			t.Errorf("backoffFor(%v, %v, %d) = %v, want %v", tt.base, tt.max, tt.n, got, tt.want)
		}
	}
}

func TestItemBackoffCountsForgetsAndIsPerKey(t *testing.T) {
	b, err := NewItemBackoff[string](BackoffOptions{Base: time.Millisecond, Max: 5 * time.Millisecond})
	require.NoError(t, err)
	want := []time.Duration{1, 2, 4, 5, 5}
	for i, w := range want {
		if got := b.When("a"); got != w*time.Millisecond {
			t.Errorf("When(a) #%d = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	require.Equal(t, 5, b.NumRequeues("a"))
	if got := b.When("b"); got != time.Millisecond {
		t.Errorf("When(b) = %v, want %v: keys back off independently", got, time.Millisecond)
	}
	b.Forget("a")
	require.Equal(t, 0, b.NumRequeues("a"))
	if got := b.When("a"); got != time.Millisecond {
		t.Errorf("When(a) after Forget = %v, want %v", got, time.Millisecond)
	}
	require.Equal(t, 1, b.NumRequeues("b"), "Forget(a) must not touch b")
}

func TestItemBackoffHugeRequeueCountSaturates(t *testing.T) {
	var b ItemBackoff[string] // zero value: the defaults
	b.When("k")
	b.mu.Lock()
	b.failures["k"] = math.MaxInt - 1
	b.mu.Unlock()
	for i := range 3 {
		if got := b.When("k"); got != DefaultBackoffMax {
			t.Errorf("When #%d at a huge count = %v, want %v", i, got, DefaultBackoffMax)
		}
	}
	if got := b.NumRequeues("k"); got != math.MaxInt {
		t.Errorf("NumRequeues = %d, want saturated at MaxInt %d", got, math.MaxInt)
	}
}

func TestNewItemBackoffRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name  string
		opts  BackoffOptions
		field string
	}{
		{"negative base", BackoffOptions{Base: -1}, "BackoffOptions.Base"},
		{"negative max", BackoffOptions{Max: -1}, "BackoffOptions.Max"},
		{"max below base", BackoffOptions{Base: time.Second, Max: time.Millisecond}, "BackoffOptions.Max"},
		{"max below default base", BackoffOptions{Max: time.Millisecond}, "BackoffOptions.Max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewItemBackoff[int](tt.opts)
			var oe *OptionError
			require.True(t, errors.As(err, &oe), "error %v is not an *OptionError", err)
			if oe.Field != tt.field {
				t.Errorf("OptionError.Field = %q, want %q", oe.Field, tt.field)
			}
		})
	}
}

// fixedLimiter waits a fixed time and counts its calls.
type fixedLimiter struct {
	wait    time.Duration
	count   map[string]int
	forgets int
}

func (f *fixedLimiter) When(k string) time.Duration { f.count[k]++; return f.wait }
func (f *fixedLimiter) Forget(k string)             { f.forgets++; delete(f.count, k) }
func (f *fixedLimiter) NumRequeues(k string) int    { return f.count[k] }

func TestMaxOf(t *testing.T) {
	short := &fixedLimiter{wait: time.Second, count: map[string]int{}}
	long := &fixedLimiter{wait: time.Minute, count: map[string]int{}}
	m := MaxOf[string](short, long)
	if got := m.When("k"); got != time.Minute {
		t.Errorf("When = %v, want the longest %v", got, time.Minute)
	}
	short.count["k"] = 7
	if got := m.NumRequeues("k"); got != 7 {
		t.Errorf("NumRequeues = %d, want the largest 7", got)
	}
	require.Equal(t, 1, long.count["k"], "every limiter records the retry")
	m.Forget("k")
	if short.forgets != 1 || long.forgets != 1 {
		t.Errorf("Forget reached %d and %d limiters' Forget, want 1 and 1", short.forgets, long.forgets)
	}
	empty := MaxOf[string]()
	if got := empty.When("k"); got != 0 {
		t.Errorf("MaxOf() When = %v, want 0", got)
	}
}

func TestDefaultRateLimiterIsMaxOfBackoffAndBucket(t *testing.T) {
	clock := newFakeClock()
	l := defaultRateLimiter[int](clock)
	// Within the bucket's burst the per-key backoff decides.
	for i := range DefaultBucketBurst {
		if got := l.When(i); got != DefaultBackoffBase {
			t.Fatalf("When(%d) within the burst = %v, want the backoff base %v", i, got, DefaultBackoffBase)
		}
	}
	// Past the burst, the bucket decides for a fresh key: 1/10 s.
	if got, want := l.When(1000), 100*time.Millisecond; got != want {
		t.Errorf("When past the burst = %v, want the bucket's %v", got, want)
	}
	require.Equal(t, 1, l.NumRequeues(1000))
	l.Forget(1000)
	require.Equal(t, 0, l.NumRequeues(1000))
	// The exported constructor works on the real clock.
	require.Equal(t, DefaultBackoffBase, DefaultRateLimiter[string]().When("x"))
}

func TestRateLimitedQueue(t *testing.T) {
	clock := newFakeClock()
	b, err := NewItemBackoff[string](BackoffOptions{Base: time.Second, Max: time.Minute})
	require.NoError(t, err)
	q := NewRateLimited(RateLimitedOptions[string]{Options: Options{Clock: clock}, RateLimiter: b})

	q.AddRateLimited("k") // waits 1s
	q.AddRateLimited("k") // asks 2s; the earlier 1s wins
	require.Equal(t, 2, q.NumRequeues("k"))
	clock.Step(time.Second - 1)
	require.Equal(t, 0, q.Len(), "ready before its backoff")
	clock.Step(1)
	require.Equal(t, 1, q.Len(), "not ready after its backoff")
	k, _ := q.Get()
	q.Forget(k)
	q.Done(k)
	require.Equal(t, 0, q.NumRequeues("k"))

	// The default limiter uses the queue's clock for its bucket.
	d := NewRateLimited(RateLimitedOptions[string]{Options: Options{Clock: clock}})
	d.AddRateLimited("x")
	clock.Step(DefaultBackoffBase)
	require.Equal(t, 1, d.Len())
}
