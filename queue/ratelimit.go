package queue

import (
	"math"
	"sync"
	"time"
)

// RateLimiter decides how long a key waits before it is retried.
// Implementations must be safe for concurrent use.
type RateLimiter[K comparable] interface {
	// When records one more retry of item and returns how long it should
	// wait before being processed again.
	When(item K) time.Duration
	// Forget clears what the limiter remembers about item, typically after
	// it was processed successfully. The queue-wide token bucket ignores it.
	Forget(item K)
	// NumRequeues returns how many retries of item have been recorded
	// since it was last forgotten.
	NumRequeues(item K) int
}

// DefaultRateLimiter returns the limiter most controllers want: the larger
// of a per-key exponential backoff (5ms doubling up to 1000s, see
// ItemBackoff) and a queue-wide token bucket (10 retries per second, burst
// 100, see TokenBucket), on the real clock.
func DefaultRateLimiter[K comparable]() RateLimiter[K] {
	return defaultRateLimiter[K](nil)
}

// defaultRateLimiter is DefaultRateLimiter with the bucket on clock.
func defaultRateLimiter[K comparable](clock Clock) RateLimiter[K] {
	return MaxOf[K](&ItemBackoff[K]{}, BucketLimiter[K](&TokenBucket{clock: clock}))
}

// BucketLimiter returns a RateLimiter that reserves one token of b per
// When, whatever the key: it limits the overall retry rate of a queue. Nil
// b means a TokenBucket with the defaults. Forget does nothing and
// NumRequeues is always zero.
func BucketLimiter[K comparable](b *TokenBucket) RateLimiter[K] {
	if b == nil {
		b = &TokenBucket{}
	}
	return bucketLimiter[K]{b: b}
}

type bucketLimiter[K comparable] struct{ b *TokenBucket }

func (l bucketLimiter[K]) When(K) time.Duration { return l.b.Reserve() }
func (l bucketLimiter[K]) Forget(K)             {}
func (l bucketLimiter[K]) NumRequeues(K) int    { return 0 }

// Default per-key backoff settings, client-go's item exponential limiter.
const (
	DefaultBackoffBase = 5 * time.Millisecond
	DefaultBackoffMax  = 1000 * time.Second
)

// BackoffOptions configures NewItemBackoff. The zero value is a backoff
// from DefaultBackoffBase doubling up to DefaultBackoffMax.
type BackoffOptions struct {
	// Base is the wait after the first failure. Zero means
	// DefaultBackoffBase; negative is an error.
	Base time.Duration
	// Max caps the wait. Zero means DefaultBackoffMax; negative or less
	// than Base is an error.
	Max time.Duration
}

// ItemBackoff is a per-key exponential backoff: the n-th retry of a key
// since it was last forgotten waits Base·2ⁿ⁻¹, capped at Max. The
// arithmetic cannot overflow, however many retries a key has had.
//
// It remembers one counter per key that failed and was not forgotten, so
// its memory is bounded by the number of distinct failing keys.
//
// The zero value is a backoff with the defaults of BackoffOptions. An
// ItemBackoff is safe for concurrent use.
type ItemBackoff[K comparable] struct {
	base, max time.Duration // zero means the default

	mu       sync.Mutex
	failures map[K]int // retries of each key since Forget; never holds 0
}

// NewItemBackoff returns a per-key exponential backoff, or an *OptionError
// when Base or Max is invalid.
func NewItemBackoff[K comparable](opts BackoffOptions) (*ItemBackoff[K], error) {
	b := &ItemBackoff[K]{base: opts.Base, max: opts.Max}
	base, maxWait := b.limits()
	if opts.Base < 0 {
		return nil, optionErrorf("BackoffOptions.Base", "must be >= 0, got %v", opts.Base)
	}
	if opts.Max < 0 || maxWait < base {
		return nil, optionErrorf("BackoffOptions.Max", "must be >= 0 and >= Base (%v), got %v", base, opts.Max)
	}
	return b, nil
}

// limits returns base and max with defaults applied.
func (b *ItemBackoff[K]) limits() (base, maxWait time.Duration) {
	base, maxWait = b.base, b.max
	if base == 0 {
		base = DefaultBackoffBase
	}
	if maxWait == 0 {
		maxWait = DefaultBackoffMax
	}
	return base, maxWait
}

// When records a failure of item and returns its backoff.
func (b *ItemBackoff[K]) When(item K) time.Duration {
	b.mu.Lock()
	if b.failures == nil {
		b.failures = make(map[K]int)
	}
	n := b.failures[item]
	if n < math.MaxInt { // saturate rather than wrap
		b.failures[item] = n + 1
	}
	b.mu.Unlock()
	base, maxWait := b.limits()
	return backoffFor(base, maxWait, n)
}

// Forget resets the backoff of item.
func (b *ItemBackoff[K]) Forget(item K) {
	b.mu.Lock()
	delete(b.failures, item)
	b.mu.Unlock()
}

// NumRequeues returns the failures of item since it was last forgotten.
func (b *ItemBackoff[K]) NumRequeues(item K) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failures[item]
}

// backoffFor returns base·2ⁿ capped at maxWait, without overflowing for
// any n >= 0.
func backoffFor(base, maxWait time.Duration, n int) time.Duration {
	if base <= 0 {
		return 0
	}
	if n >= 63 {
		return maxWait
	}
	d := base << uint(n)
	if d>>uint(n) != base || d > maxWait { // bits shifted out, or past the cap
		return maxWait
	}
	return d
}

// MaxOf returns a RateLimiter whose When asks every limiter (each records
// the retry) and returns the longest wait, whose NumRequeues is the largest
// count, and whose Forget forgets in every limiter. With no limiters every
// wait is zero.
func MaxOf[K comparable](limiters ...RateLimiter[K]) RateLimiter[K] {
	return maxOf[K](append([]RateLimiter[K](nil), limiters...))
}

type maxOf[K comparable] []RateLimiter[K]

func (m maxOf[K]) When(item K) time.Duration {
	var longest time.Duration
	for _, l := range m {
		longest = max(longest, l.When(item))
	}
	return longest
}

func (m maxOf[K]) Forget(item K) {
	for _, l := range m {
		l.Forget(item)
	}
}

func (m maxOf[K]) NumRequeues(item K) int {
	var most int
	for _, l := range m {
		most = max(most, l.NumRequeues(item))
	}
	return most
}
