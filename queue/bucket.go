package queue

import (
	"math"
	"sync"
	"time"
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
// Every method that reads the clock has an ...At twin taking the time, so
// the logic can be used and tested without a clock. Times given to the At
// twins should not go backwards; a time before the last one seen is
// treated as equal to it.
//
// The zero value is a full bucket with the defaults of BucketOptions on the
// real clock. A TokenBucket is safe for concurrent use. Most callers want
// ReserveAt or Reserve; a queue uses it through BucketLimiter.
type TokenBucket struct {
	rate  float64 // tokens per second; 0 means not yet defaulted
	burst float64
	clock Clock

	mu sync.Mutex
	// started is false until the first reservation or read, which fills
	// the bucket: the bucket starts full without reading a clock in the
	// constructor.
	started bool
	// tokens is the number of tokens at last. It never exceeds burst and
	// goes negative when reservations borrow from the future.
	tokens float64
	// last is the time tokens was computed for.
	last time.Time
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
	b := &TokenBucket{rate: opts.Rate, burst: float64(opts.Burst), clock: opts.Clock}
	b.defaults()
	return b, nil
}

// defaults fills in zero fields; the zero TokenBucket gets them lazily.
func (b *TokenBucket) defaults() {
	if b.rate == 0 {
		b.rate = DefaultBucketRate
	}
	if b.burst == 0 {
		b.burst = DefaultBucketBurst
	}
	b.clock = clockOrReal(b.clock)
}

// Rate returns the refill rate in tokens per second.
func (b *TokenBucket) Rate() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.defaults()
	return b.rate
}

// Burst returns the capacity of the bucket.
func (b *TokenBucket) Burst() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.defaults()
	return int(b.burst)
}

// Reserve is ReserveAt(now) on the bucket's clock.
func (b *TokenBucket) Reserve() time.Duration {
	b.mu.Lock()
	b.defaults()
	c := b.clock
	b.mu.Unlock()
	return b.ReserveAt(c.Now())
}

// ReserveAt takes one token at now and returns how long after now the
// token is available: zero when the bucket had one, otherwise the time the
// refill needs to cover every token borrowed so far. The wait is capped at
// the largest time.Duration.
func (b *TokenBucket) ReserveAt(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.defaults()
	if math.IsInf(b.rate, 1) {
		return 0
	}
	b.advanceLocked(now)
	b.tokens--
	if b.tokens >= 0 {
		return 0
	}
	return durationFromTokens(-b.tokens, b.rate)
}

// Tokens is TokensAt(now) on the bucket's clock.
func (b *TokenBucket) Tokens() float64 {
	b.mu.Lock()
	b.defaults()
	c := b.clock
	b.mu.Unlock()
	return b.TokensAt(c.Now())
}

// TokensAt returns the number of tokens in the bucket at now; negative
// when reservations have borrowed from the future.
func (b *TokenBucket) TokensAt(now time.Time) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.defaults()
	if math.IsInf(b.rate, 1) {
		return b.burst
	}
	b.advanceLocked(now)
	return b.tokens
}

// advanceLocked refills the bucket for the time between last and now.
// b.mu must be held.
func (b *TokenBucket) advanceLocked(now time.Time) {
	if !b.started {
		b.started, b.tokens, b.last = true, b.burst, now
		return
	}
	if !now.After(b.last) {
		return // time did not move forward: nothing to add
	}
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
}

// durationFromTokens is the time rate needs to produce tokens, capped at
// the largest time.Duration.
func durationFromTokens(tokens, rate float64) time.Duration {
	secs := tokens / rate
	if secs >= float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Ceil(secs * float64(time.Second)))
}
