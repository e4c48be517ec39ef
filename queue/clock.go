package queue

import "time"

// Clock is the source of time for the queue, its rate limiters and the
// runner. The zero value of every Options struct uses the real clock; tests
// inject a fake one or run inside testing/synctest.
//
// Implementations must be safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has elapsed and returns
	// a Timer that can stop or re-arm that call, like time.AfterFunc.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is the handle AfterFunc returns. *time.Timer satisfies it.
type Timer interface {
	// Stop prevents the call from happening and reports whether it did so.
	Stop() bool
	// Reset re-arms the call to happen after d and reports whether the
	// timer had been active.
	Reset(d time.Duration) bool
}

// RealClock is the Clock backed by package time. Its zero value is ready to
// use and it is safe for concurrent use.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc returns time.AfterFunc(d, f).
func (RealClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// clockOrReal returns c, or the real clock when c is nil.
func clockOrReal(c Clock) Clock {
	if c == nil {
		return RealClock{}
	}
	return c
}
