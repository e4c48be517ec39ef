package shard

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Run joins the ring and calls work with a context that ends when ctx
// does or when the member fences itself; it renews the member's Lease
// every RetryPeriod while work runs and returns after work has
// returned:
//   - nil when ctx ended (or work returned by itself): the Lease is
//     renewed until work has returned, then released (holder ""), so the
//     other members take the keys over within one retry period;
//   - an error wrapping ErrFenced when no renew succeeded within
//     RenewDeadline, or the Lease was deleted or taken: Begin refused
//     every key from the deadline on and the contexts of reconciles in
//     flight were cancelled at that moment. Once work has returned the
//     Lease is released if the server can be reached.
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
		m.fence()
		m.log.Error("fenced: stopped reconciling", "error", err)
	}
	stopWork()
	<-done
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
	m.notify()
	m.release(context.WithoutCancel(ctx))
	return err
}

// loop runs rounds until work returns (nil) or the renew deadline passes
// (ErrFenced). When ctx ends it keeps renewing until work has returned,
// so a clean shutdown never lets the Lease lapse while reconciles drain.
func (m *Member) loop(ctx context.Context, done <-chan struct{}) error {
	renewCtx := context.WithoutCancel(ctx)
	// Before the first renew there is nothing to fence: the deadline
	// timer waits for it.
	lost := time.NewTimer(time.Hour)
	lost.Stop()
	defer lost.Stop()
	next := time.NewTimer(0)
	defer next.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-lost.C:
			return fmt.Errorf("%w: no renew succeeded within the renew deadline %v", ErrFenced, m.cfg.RenewDeadline)
		case <-next.C:
		}
		deadline, renewed, err := m.roundBounded(renewCtx)
		switch {
		case errors.Is(err, ErrFenced):
			return err
		case err != nil:
			m.m.renewFailures.Inc()
			m.log.Warn("round failed; retrying until the renew deadline", "error", err, "deadline", deadline)
		}
		if renewed {
			lost.Reset(time.Until(deadline))
		}
		if !deadline.IsZero() && !time.Now().Before(deadline) {
			return fmt.Errorf("%w: no renew succeeded within the renew deadline %v (last: %w)", ErrFenced, m.cfg.RenewDeadline, err)
		}
		// 0.8 to 1 retry period, so members do not move in step.
		next.Reset(m.cfg.RetryPeriod - time.Duration(rand.Int64N(int64(m.cfg.RetryPeriod)/5+1)))
	}
}

// roundBounded runs one round bounded by the current renew deadline (or
// one RenewDeadline before the first renew), so a hanging request does
// not extend it. It returns the deadline after the round and whether
// the round renewed.
func (m *Member) roundBounded(ctx context.Context) (time.Time, bool, error) {
	start := time.Now()
	m.mu.Lock()
	deadline := m.deadline
	m.mu.Unlock()
	bound := deadline
	if bound.IsZero() {
		bound = start.Add(m.cfg.RenewDeadline)
	}
	rctx, cancel := context.WithDeadline(ctx, bound)
	defer cancel()
	if err := m.round(rctx, start); err != nil {
		return deadline, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.deadline, true, nil
}
