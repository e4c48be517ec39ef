package queue

import (
	"math"
	"sync"
	"time"

	"github.com/kwatch/kwatch/internal/ratelimit"
)

// Default token bucket settings, client-go's overall retry limit.
const (
	DefaultBucketRate  = 10.0 // tokens per second
	DefaultBucketBurst = 100  // tokens
)

// BucketOptions configures NewTokenBucket. The zero value is a bucket of
// DefaultBucketRate tokens per second and DefaultBucketBurst tokens on the
// real clock.
type BucketOptions struct {
	// Rate is the number of tokens added per second. Zero means
	// DefaultBucketRate; math.Inf(1) means every reservation is free.
	// Negative or NaN is an error.
	Rate float64
	// Burst is the capacity of the bucket, which starts full. Zero means
	// DefaultBucketBurst; negative is an error.
	Burst int
	// Clock is read by Reserve and Tokens. Nil means the real clock.
	Clock Clock
}

// TokenBucket hands out one token per reservation, refilling at a fixed
// rate up to a burst. When the bucket is empty a reservation still
// succeeds, but its token is borrowed from the future: the reservation
// returns how long the caller must wait for it. That is what a queue needs
// to schedule a retry rather than block for it.
//
// The bucket is kwatch's one token bucket (internal/ratelimit, on
// golang.org/x/time/rate); TokenBucket adds the queue's clock and lazy
// defaults for the zero value. Every method that reads the clock has an
// ...At twin taking the time, so the logic can be used and tested without
// a clock. Times given to the At twins should not go backwards; a time
// before the last one seen is treated as equal to it.
//
// The zero value is a full bucket with the defaults of BucketOptions on the
// real clock. A TokenBucket is safe for concurrent use. Most callers want
// ReserveAt or Reserve; a queue uses it through BucketLimiter.
type TokenBucket struct {
	rate  float64 // tokens per second; 0 means not yet defaulted
	burst int
	clock Clock

	mu sync.Mutex
	// lim is nil until the first call, which builds it full: the zero
	// TokenBucket works, and the constructor reads no clock.
	lim *ratelimit.Bucket
}

// NewTokenBucket returns a full token bucket, or an *OptionError when Rate
// or Burst is invalid.
func NewTokenBucket(opts BucketOptions) (*TokenBucket, error) {
	if opts.Rate < 0 || math.IsNaN(opts.Rate) {
		return nil, optionErrorf("BucketOptions.Rate", "must be >= 0 tokens per second, got %v", opts.Rate)
	}
	if opts.Burst < 0 {
		return nil, optionErrorf("BucketOptions.Burst", "must be >= 0 tokens, got %d", opts.Burst)
	}
	b := &TokenBucket{rate: opts.Rate, burst: opts.Burst, clock: opts.Clock}
	b.mu.Lock()
	b.defaultsLocked()
	b.mu.Unlock()
	return b, nil
}

// defaultsLocked fills in zero fields and builds the limiter; the zero
// TokenBucket gets them on first use. b.mu must be held.
func (b *TokenBucket) defaultsLocked() {
	if b.lim != nil {
		return
	}
	if b.rate == 0 {
		b.rate = DefaultBucketRate
	}
	if b.burst == 0 {
		b.burst = DefaultBucketBurst
	}
	b.clock = clockOrReal(b.clock)
	b.lim = ratelimit.New(b.rate, b.burst) // math.Inf(1): every token free
}

// Rate returns the refill rate in tokens per second.
func (b *TokenBucket) Rate() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.defaultsLocked()
	return b.rate
}

// Burst returns the capacity of the bucket.
func (b *TokenBucket) Burst() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.defaultsLocked()
	return b.burst
}

// Reserve is ReserveAt(now) on the bucket's clock.
func (b *TokenBucket) Reserve() time.Duration {
	return b.ReserveAt(b.now())
}

// ReserveAt takes one token at now and returns how long after now the
// token is available: zero when the bucket had one, otherwise the time the
// refill needs to cover every token borrowed so far. The wait is capped at
// the largest time.Duration.
func (b *TokenBucket) ReserveAt(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.defaultsLocked()
	return b.lim.ReserveAt(now)
}

// Tokens is TokensAt(now) on the bucket's clock.
func (b *TokenBucket) Tokens() float64 {
	return b.TokensAt(b.now())
}

// TokensAt returns the number of tokens in the bucket at now; negative
// when reservations have borrowed from the future.
func (b *TokenBucket) TokensAt(now time.Time) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.defaultsLocked()
	return b.lim.TokensAt(now)
}

// now reads the bucket's clock, outside the lock: a fake clock may call
// back into code that takes it.
func (b *TokenBucket) now() time.Time {
	b.mu.Lock()
	b.defaultsLocked()
	c := b.clock
	b.mu.Unlock()
	return c.Now()
}
