package controller

import (
	"context"
	"io"
	"net/http"
	"sync"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/shard"
)

// This file is the one answer to "what happens on a lost Lease": what is
// cancelled, what is refused. With neither LeaderElection nor Sharding
// nothing is fenced.
//
// The right to act is a leader.Term (the Elector's, or the shard
// Member's): it holds until RenewDeadline after the start of the last
// successful renew round, by the local monotonic clock, and ends by a
// timer at that instant whatever the elector's goroutine is doing.
//
//   - Reconciles. A reconcile starts only while the term holds (and, when
//     sharded, only for a key the member may start: Member.Begin in
//     shard.go). Its context is cancelled when the term ends, at once;
//     ShutdownTimeout does not apply (it bounds an ordinary shutdown,
//     during which the Lease is still renewed).
//   - Writes. Every write through Manager.Client (any method but GET and
//     HEAD) is checked immediately before it leaves, after the client's
//     rate limit: refused with a *kube.FencedError (kube.IsFenced),
//     counted in kwatch_fenced_writes_total, and never sent, unless the
//     term holds and, when sharded, the write's key (the reconcile's,
//     carried by its context) is in flight on this member or may start
//     here (Member.BeginWrite). A write with no key (its context does not
//     come from a reconcile) is checked against the term only. A write
//     that passes is sent with a context cancelled when the term ends,
//     and a sharded key's handover waits until its answer was read.
//     So a reconcile that ignores its context still cannot write once
//     the replica may not act.
//   - What the fence cannot stop is a write already on the wire when the
//     term ends: it is covered by the margin LeaseDuration -
//     RenewDeadline (5 s by default) before another replica can act, as
//     long as it reaches the server within that margin (doc.go). Every
//     write that passes is a hold of the term (leader.Term.Hold); one
//     still open when the term ends, cut off by its own deadline, or
//     back without a known outcome (no answer; 500, 502, 503 or 504:
//     kube.OutcomeUnknown) is a cut, and the margin is kept after it
//     where the Lease is given up on purpose: the elector and the shard
//     member wait it after their last cut before they release, and a
//     sharded key whose write was cut stays in flight on its member
//     that long, so its handover waits too.
//   - Not fenced: reads, the manager's own Lease writes, events
//     (Manager.Recorder writes them after the reconcile that recorded
//     them, from its own queue), and writes through any other client,
//     such as the *kube.Client given to NewManager.

// fence holds the policy above for one manager. The zero value (no
// elector, no member) allows everything. Safe for concurrent use.
type fence struct {
	elector *leader.Elector // nil unless ManagerOptions.LeaderElection
	member  *shard.Member   // nil unless ManagerOptions.Sharding

	refusedLease, refusedKey metrics.Counter // kwatch_fenced_writes_total by reason
	refusedReconciles        metrics.Counter // kwatch_fenced_reconciles_total
}

// The reasons of kwatch_fenced_writes_total, and of FencedError.
const (
	reasonLease = "lease" // the term is over: not leading, or the member fenced
	reasonKey   = "key"   // the member does not own the write's key now
)

func newFence(m *Manager) *fence {
	p, _ := metrics.OrNoop(m.opts.Metrics)
	const help = "Writes through the manager's client refused before they were sent, because this replica no longer holds its Lease (reason lease) or the key the write is for (reason key)."
	return &fence{elector: m.elector, member: m.member,
		refusedLease: p.Counter("kwatch_fenced_writes_total", help, metrics.Label{Name: "reason", Value: reasonLease}),
		refusedKey:   p.Counter("kwatch_fenced_writes_total", help, metrics.Label{Name: "reason", Value: reasonKey}),
		refusedReconciles: p.Counter("kwatch_fenced_reconciles_total",
			"Reconciles not started because this replica's Lease term had ended (leader election)."),
	}
}

// active reports whether anything is fenced.
func (f *fence) active() bool { return f.elector != nil || f.member != nil }

// term is the term writes and reconciles are checked against; nil when
// there is none yet (nothing may act).
func (f *fence) term() *leader.Term {
	if f.elector != nil {
		return f.elector.Term()
	}
	return f.member.Term()
}

// reconcileKey is the context key of the reconcile a context is for: the
// controller and the key (a keyRef), for the write fence and the
// expectations (expect.go).
type reconcileKey struct{}

func reconcileOf(ctx context.Context) (keyRef, bool) {
	k, ok := ctx.Value(reconcileKey{}).(keyRef)
	return k, ok
}

func keyOf(ctx context.Context) (Key, bool) {
	k, ok := reconcileOf(ctx)
	return k.key, ok
}

// wrap gates next, controller ctl's reconciler. Every reconcile's context
// carries its controller and key, for the write fence and the
// expectations. Under leader election a reconcile starts only while the
// term holds, with a context cancelled when it ends; a sharded
// reconcile's gate is the member's (shardFilter.wrap).
func (f *fence) wrap(ctl string, next Reconciler) Reconciler {
	return func(ctx context.Context, key Key) (Result, error) {
		ctx = context.WithValue(ctx, reconcileKey{}, keyRef{ctl, key})
		if f.elector == nil {
			return next(ctx, key)
		}
		term := f.elector.Term()
		if term == nil {
			f.refusedReconciles.Inc()
			return Result{}, nil
		}
		if _, ok := term.Until(); !ok {
			f.refusedReconciles.Inc()
			return Result{}, nil // Run is ending with leader.ErrLost
		}
		rctx, done := term.Hold(ctx)
		defer done(false)
		return next(rctx, key)
	}
}

// intercept is the manager's client's kube.WriteInterceptor: the one
// place each write passes just before it leaves. The fence decides
// there; the expectations' record of an accepted write is the client's
// WriteRecorder (expect.go), called once the answer is decoded.
func (f *fence) intercept(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	ctx, release, reason := f.admit(req.Context())
	if reason != "" {
		if reason == reasonKey {
			f.refusedKey.Inc()
		} else {
			f.refusedLease.Inc()
		}
		return nil, &kube.FencedError{Method: req.Method, Path: req.URL.Path, Reason: describe(reason)}
	}
	resp, err := send(req.WithContext(ctx))
	if err != nil {
		release(true) // no answer: the server may have read it all the same
		return nil, err
	}
	unknown := kube.OutcomeUnknown(resp.StatusCode)
	resp.Body = &onClose{ReadCloser: resp.Body, f: func() { release(unknown) }}
	return resp, nil
}

// admit decides one write: the context to send it with and the release
// to call once its answer was read (saying whether its outcome is
// unknown), or the reason it is refused. Either way the write is a hold
// of the term (leader.Term.Hold): one cut off or with an unknown
// outcome delays a release of the Lease, and a sharded key's handover,
// by the margin.
func (f *fence) admit(ctx context.Context) (context.Context, func(unknown bool), string) {
	term := f.term()
	if term == nil {
		return ctx, nil, reasonLease
	}
	if _, ok := term.Until(); !ok {
		return ctx, nil, reasonLease
	}
	if key, ok := keyOf(ctx); ok && f.member != nil {
		wctx, done, ok := f.member.BeginWrite(ctx, key.String())
		if !ok {
			if _, holds := term.Until(); !holds {
				return ctx, nil, reasonLease
			}
			return ctx, nil, reasonKey
		}
		return wctx, done, ""
	}
	wctx, done := term.Hold(ctx)
	return wctx, func(unknown bool) { done(unknown) }, ""
}

func describe(reason string) string {
	if reason == reasonKey {
		return "this shard member does not own the write's key now"
	}
	return "this replica no longer holds its Lease (renew deadline passed, lost or released)"
}

// onClose runs f once when the body is closed: the write's hold ends
// once its answer has been read.
type onClose struct {
	io.ReadCloser
	once sync.Once
	f    func()
}

func (c *onClose) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(c.f)
	return err
}
