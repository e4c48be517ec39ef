package controller

import (
	"time"

	"github.com/kwatch/kwatch/queue"
)

// A parked reconcile (expect.go's gate) returns an empty Result, on which
// the runner forgets the key's retry history. When the parked reconcile
// was a retry after an error, that would reset the key's backoff: a
// reconcile that writes and then fails (it records the error in a
// condition, then returns it) would be retried once per cache lag
// forever, never backing off. So the controller's rate limiter skips the
// one Forget that follows a parked reconcile: the key keeps its failures,
// and its next real outcome decides.

// limiter wraps controller ctl's rate limiter (the queue's default when
// nil) so that a parked reconcile leaves the key's backoff as it was.
func (e *expectations) limiter(ctl string, rl queue.RateLimiter[Key]) queue.RateLimiter[Key] {
	if e == nil || e.timeout <= 0 {
		return rl
	}
	if rl == nil {
		rl = queue.DefaultRateLimiter[Key]()
	}
	return &parkedLimiter{e: e, ctl: ctl, inner: rl}
}

type parkedLimiter struct {
	e     *expectations
	ctl   string
	inner queue.RateLimiter[Key]
}

func (l *parkedLimiter) When(key Key) time.Duration { return l.inner.When(key) }
func (l *parkedLimiter) NumRequeues(key Key) int    { return l.inner.NumRequeues(key) }

func (l *parkedLimiter) Forget(key Key) {
	kr := keyRef{l.ctl, key}
	l.e.mu.Lock()
	_, parked := l.e.parked[kr]
	delete(l.e.parked, kr)
	l.e.mu.Unlock()
	if !parked {
		l.inner.Forget(key)
	}
}
