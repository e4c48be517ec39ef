// Package ratelimit is kwatch's one wrapper of golang.org/x/time/rate: the
// client's request limit (kube), the queue's retry bucket, the event
// recorder's per-object buckets and the snapshot writer's pacing all take
// their tokens from a Bucket, so what a token bucket does with free tokens,
// a burst too small for a request, or a clock that goes backwards is
// decided here once.
package ratelimit

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Bucket is a token bucket: perSecond tokens a second up to burst, full at
// the start. A nil *Bucket is no limit: every call succeeds at once.
//
// Every method that takes a time has the time given (an ...At method), so
// the logic needs no clock and tests need no sleep; Wait alone reads the
// real clock. Times given to the At methods should not go backwards: one
// before the latest seen counts as that latest one (rate.Limiter alone
// would credit the gap again once time moved forward).
//
// A Bucket is safe for concurrent use. Build it with New.
type Bucket struct {
	burst int
	free  bool // perSecond is +Inf: every token is free

	mu   sync.Mutex
	lim  *rate.Limiter
	last time.Time // the latest time given to an At method; guarded by mu
}

// New returns a full bucket of perSecond tokens a second (math.Inf(1): every
// token free) and burst tokens. Both must be >= 0 (the callers validate
// their own options, naming the field); a burst of 0 refuses every token
// unless they are free.
func New(perSecond float64, burst int) *Bucket {
	return &Bucket{burst: burst, free: math.IsInf(perSecond, 1), lim: rate.NewLimiter(rate.Limit(perSecond), burst)}
}

// Every converts a minimum interval between tokens to tokens a second; zero
// or less means free (math.Inf(1)).
func Every(interval time.Duration) float64 {
	if interval <= 0 {
		return math.Inf(1)
	}
	return float64(time.Second) / float64(interval)
}

// Wait blocks until n tokens are taken or ctx ends. n beyond the burst is
// taken burst tokens at a time, so a large write is paced rather than
// refused. It returns rate's error, which says when ctx's deadline comes
// before the tokens would.
func (b *Bucket) Wait(ctx context.Context, n int) error {
	if b == nil || b.free {
		return nil
	}
	for n > 0 {
		step := min(n, max(b.burst, 1))
		if err := b.lim.WaitN(ctx, step); err != nil {
			return err
		}
		n -= step
	}
	return nil
}

// ReserveAt takes one token at now and returns how long after now it is
// available: zero when the bucket had one, otherwise the time the refill
// needs to cover every token borrowed so far. It always succeeds: a caller
// schedules the wait instead of blocking on it.
func (b *Bucket) ReserveAt(now time.Time) time.Duration {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now = b.forwardLocked(now)
	// ReserveN waits as long as it takes (its limit is rate.InfDuration),
	// and one token never exceeds a burst of at least one, so the
	// reservation is ok.
	return b.lim.ReserveN(now, 1).DelayFrom(now)
}

// AllowAt takes one token at now if the bucket has one, and reports
// whether it had.
func (b *Bucket) AllowAt(now time.Time) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lim.AllowN(b.forwardLocked(now), 1)
}

// TokensAt returns the number of tokens in the bucket at now; negative when
// reservations have borrowed from the future, the burst when tokens are
// free.
func (b *Bucket) TokensAt(now time.Time) float64 {
	if b == nil {
		return math.Inf(1)
	}
	if b.free {
		return float64(b.burst) // rate.Limiter does not count free tokens
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lim.TokensAt(b.forwardLocked(now))
}

// Full reports whether the bucket holds its whole burst at now: a bucket
// that has refilled holds nothing a new one would not.
func (b *Bucket) Full(now time.Time) bool { return b == nil || b.TokensAt(now) >= float64(b.burst) }

// forwardLocked returns now, or the latest time seen when now is before
// it, and remembers it. b.mu must be held.
func (b *Bucket) forwardLocked(now time.Time) time.Time {
	if now.Before(b.last) {
		return b.last
	}
	b.last = now
	return now
}
