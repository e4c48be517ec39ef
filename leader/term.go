package leader

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrTermOver is the cause of a Term's context once its deadline passed
// without an extension.
var ErrTermOver = errors.New("leader: the renew deadline passed")

// Term is one holder's right to act on a Lease, on the local monotonic
// clock: it lasts until its deadline, which each successful renew moves
// forward (Extend), and once over it is over for good. An Elector starts
// one per leadership, a shard member one per membership (package
// shard); package controller asks them before each reconcile and each
// write.
//
// Why it does not trust the holder's loop: the deadline is compared
// with the clock by whoever asks (Until), and a timer (not the loop)
// cancels Context at the deadline. An elector whose goroutine is
// starved, blocked or paused therefore still stops its reconciles and
// closes its write fence at the instant it must, and a renew that
// succeeds after the deadline cannot reopen it.
//
// The zero value is not usable; build one with NewTerm. Its methods are
// safe for concurrent use.
type Term struct {
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	deadline time.Time   // guarded by mu; only moves forward
	over     bool        // the term ended; guarded by mu
	timer    *time.Timer // fires expire at the deadline; guarded by mu
	endedAt  time.Time   // when the term ended; guarded by mu
	holds    int         // holds not done yet (hold.go); guarded by mu
	cut      time.Time   // the last cut of a hold (hold.go); guarded by mu
}

// NewTerm starts a term that lasts until deadline. It starts no
// goroutine: a timer fires at the deadline (its function runs then).
func NewTerm(deadline time.Time) *Term {
	t := &Term{deadline: deadline}
	t.ctx, t.cancel = context.WithCancelCause(context.Background())
	t.mu.Lock()
	t.timer = time.AfterFunc(time.Until(deadline), t.expire)
	t.mu.Unlock()
	return t
}

// expire is the timer's function: it ends the term, unless an Extend
// moved the deadline meanwhile (the timer was reset while firing).
func (t *Term) expire() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.over {
		return
	}
	if d := time.Until(t.deadline); d > 0 {
		t.timer.Reset(d)
		return
	}
	t.endLocked(ErrTermOver)
}

func (t *Term) endLocked(cause error) {
	t.over = true
	t.endedAt = time.Now()
	if t.holds > 0 { // each is cut now (hold.go)
		t.cutLocked(t.endedAt)
	}
	t.timer.Stop()
	t.cancel(cause)
}

// Extend moves the deadline to d (a deadline never moves back). It
// reports false, and ends the term, when the term had ended or its
// deadline had passed already: a renew that comes back late does not
// revive a term whose reconciles were cancelled and whose writes were
// refused.
func (t *Term) Extend(d time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.over {
		return false
	}
	if !time.Now().Before(t.deadline) {
		t.endLocked(ErrTermOver)
		return false
	}
	if d.After(t.deadline) {
		t.deadline = d
		t.timer.Reset(time.Until(d))
	}
	return true
}

// End ends the term now with cause (another holder seen, a release).
// Ending an ended term does nothing.
func (t *Term) End(cause error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.over {
		t.endLocked(cause)
	}
}

// Until reports whether the term holds now, by the clock at the call,
// and its deadline. Past the deadline it ends the term (if the timer has
// not yet), so a caller never sees a term hold after its deadline.
func (t *Term) Until() (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.over && !time.Now().Before(t.deadline) {
		t.endLocked(ErrTermOver)
	}
	return t.deadline, !t.over
}

// Context is cancelled when the term ends: at its deadline (by the
// timer, whatever its holder's goroutine is doing) or at End.
// context.Cause names why.
func (t *Term) Context() context.Context { return t.ctx }
