package leader

import (
	"context"
	"log/slog"
	"time"
)

// Holds: what a term's end cannot recall. A reconcile or a write of the
// term is a hold from its start until its done. When the term ends its
// holds' contexts are cancelled, but a write the server has already read
// may still be applied; the same is true of a write that came back
// without a known outcome while the term held (no answer, a broken
// connection, a 500, 502, 503 or 504: kube.OutcomeUnknown). Each such
// instant is a cut, and LastCut is the latest. A holder that gives its Lease up on
// purpose (a release, a shard key handed over) waits Timing.Margin after
// the last cut first, so such a write has the margin it would have had
// if the term had lapsed, instead of the next candidate's retry period.

// Hold starts one action of the term: the returned context is ctx,
// cancelled also when the term ends (with the term's cause). done ends
// the hold; unknown says its outcome is not known (a write that may
// still be applied). done reports whether the hold was cut: it was held
// when the term ended, its context ended before done (a deadline that
// may have cut off a write), or unknown. Calling done again does nothing
// and reports the first answer.
//
// Hold on an ended term returns a cancelled context; its done reports a
// cut (its context ended first) at the term's end, which moves LastCut
// no later than that.
func (t *Term) Hold(ctx context.Context) (context.Context, func(unknown bool) (cut bool)) {
	hctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(t.ctx, func() { cancel(context.Cause(t.ctx)) })
	t.mu.Lock()
	t.holds++
	if t.over { // AfterFunc would cancel it, but not before Hold returns
		cancel(context.Cause(t.ctx))
	}
	t.mu.Unlock()
	var (
		ended bool
		was   bool
	)
	return hctx, func(unknown bool) bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		if ended {
			return was
		}
		ended = true
		stop()
		was = unknown || hctx.Err() != nil
		cancel(nil)
		t.holds--
		if was {
			t.cutLocked(time.Now())
		}
		return was
	}
}

// LastCut is the latest cut of the term's holds (zero if none): the
// instant after which one of its writes may still reach the server.
func (t *Term) LastCut() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cut
}

// cutLocked records a cut at at. A hold that ends after the term did was
// cut when the term ended: nothing of it left after that instant. The
// caller holds mu.
func (t *Term) cutLocked(at time.Time) {
	if t.over && t.endedAt.Before(at) {
		at = t.endedAt
	}
	if at.After(t.cut) {
		t.cut = at
	}
}

// AwaitMargin waits, when a hold of the ended term was cut, until margin
// (Timing.Margin) after the last cut, and logs why on log. A holder calls
// it after the term ended and before it gives its Lease up on purpose
// (releases it): once the Lease shows no holder the others act within a
// retry period, and a write cut off by the end should have the margin it
// would have had if the term had lapsed. The Lease is not renewed
// meanwhile; the others take it no earlier than LeaseDuration after its
// last renew, which is later.
func (t *Term) AwaitMargin(margin time.Duration, log *slog.Logger) {
	cut := t.LastCut()
	if cut.IsZero() {
		return
	}
	if d := time.Until(cut.Add(margin)); d > 0 {
		log.Info("waiting for the margin before the release: a write may still be on its way", "wait", d)
		time.Sleep(d)
	}
}
