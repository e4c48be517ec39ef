package shard

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/kwatch/kwatch/leader"
)

// Run joins the ring and calls work with a context that ends when ctx
// does or when the member fences itself; it renews the member's Lease
// every RetryPeriod while work runs and returns after work has
// returned:
//   - nil when ctx ended (or work returned by itself): the Lease is
//     renewed until work has returned; then the term ends (nothing more
//     may act, a write without a key included) and the Lease is released
//     (holder ""), so the other members take the keys over within one
//     retry period; when a reconcile or a write of the term was cut
//     (still held as the term ended, cut off by its own deadline, or
//     back without a known outcome: leader.Term.Hold), the release waits
//     until LeaseDuration - RenewDeadline after the last cut, the margin
//     a write on its way has when the term lapses;
//   - an error wrapping ErrFenced when no renew succeeded within
//     RenewDeadline, or the Lease was deleted, taken or released under
//     it: Begin refused every key from then on and the contexts of
//     reconciles in flight were cancelled at that moment. Once work has returned the
//     Lease is released if the server can be reached (after the same
//     margin, counted from the last cut, when there was one).
//
// work starts at once; Begin allows nothing until the first barrier has
// passed. A Member runs once.
func (m *Member) Run(ctx context.Context, work func(ctx context.Context)) error {
	if work == nil {
		return errors.New("shard: Run needs a work function")
	}
	if !m.ran.CompareAndSwap(false, true) {
		return errors.New("shard: a Member runs once")
	}
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	done := make(chan struct{})
	go func() {
		defer close(done)
		work(workCtx)
	}()
	err := m.loop(ctx, done)
	if err != nil {
		m.fence(err)
		m.log.Error("fenced: stopped reconciling", "error", err)
	}
	stopWork()
	<-done
	m.mu.Lock()
	m.stopped = true
	term := m.term
	m.mu.Unlock()
	// Before the release: once the Lease shows holder "" the others take
	// this member's keys within a barrier, long before its renew
	// deadline, so nothing (a write without a key included) may act. A
	// hold still open as the term ends is cut then (leader.Term.Hold),
	// and the release waits the margin after the last cut.
	if term != nil {
		term.End(errReleased)
		term.AwaitMargin(m.cfg.Margin(), m.log)
	}
	m.notify()
	m.release(context.WithoutCancel(ctx))
	return err
}

// errReleased ends the term of a member that leaves the ring: its work
// returned, and its Lease is about to be released.
var errReleased = errors.New("shard: the member left the ring")

// loop runs rounds until work returns (nil) or the renew deadline passes
// (ErrFenced). When ctx ends it keeps renewing until work has returned,
// so a clean shutdown never lets the Lease lapse while reconciles drain.
func (m *Member) loop(ctx context.Context, done <-chan struct{}) error {
	renewCtx := context.WithoutCancel(ctx)
	// Before the first renew there is nothing to fence: no term yet, so
	// nothing ends.
	var lost <-chan struct{}
	next := time.NewTimer(0)
	defer next.Stop()
	for {
		select {
		case <-done:
			if term := m.Term(); term != nil {
				if _, ok := term.Until(); !ok { // the deadline passed first, maybe unseen
					return fmt.Errorf("%w: no renew succeeded within the renew deadline %v", ErrFenced, m.cfg.RenewDeadline)
				}
			}
			return nil
		case <-lost:
			return fmt.Errorf("%w: no renew succeeded within the renew deadline %v", ErrFenced, m.cfg.RenewDeadline)
		case <-next.C:
		}
		deadline, term, err := m.roundBounded(renewCtx)
		switch {
		case errors.Is(err, ErrFenced):
			return err
		case err != nil:
			m.m.renewFailures.Inc()
			m.log.Warn("round failed; retrying until the renew deadline", "error", err, "deadline", deadline)
		}
		if term != nil {
			lost = term.Context().Done()
			if _, ok := term.Until(); !ok {
				return fmt.Errorf("%w: no renew succeeded within the renew deadline %v (last: %v)", ErrFenced, m.cfg.RenewDeadline, err)
			}
		}
		// 0.8 to 1 retry period, so members do not move in step.
		next.Reset(m.cfg.RetryPeriod - time.Duration(rand.Int64N(int64(m.cfg.RetryPeriod)/5+1)))
	}
}

// roundBounded runs one round bounded by the current renew deadline (or
// one RenewDeadline before the first renew), so a hanging request does
// not extend it. It returns the deadline after the round and the term
// (nil before the first renew).
func (m *Member) roundBounded(ctx context.Context) (time.Time, *leader.Term, error) {
	start := time.Now()
	m.mu.Lock()
	term := m.term
	m.mu.Unlock()
	bound := start.Add(m.cfg.RenewDeadline)
	if term != nil {
		bound, _ = term.Until()
	}
	rctx, cancel := context.WithDeadline(ctx, bound)
	defer cancel()
	err := m.round(rctx, start)
	m.mu.Lock()
	term = m.term
	m.mu.Unlock()
	if term != nil {
		bound, _ = term.Until()
	}
	return bound, term, err
}
