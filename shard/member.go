package shard

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
)

// ErrFenced is returned by Run when the member fenced itself: no renew
// of its Lease succeeded within RenewDeadline, or its Lease was deleted,
// taken by another identity or released by someone else. Every reconcile had stopped (or had its
// context cancelled) before the other members could judge it dead.
// Errors from Run wrap it with the reason.
// It wraps kube.ErrFenced, so kube.IsFenced is true for it as for a
// write the member's fence refused: one word for "this replica may not
// act any more".
var ErrFenced = fmt.Errorf("shard: the member's lease could not be renewed: %w", kube.ErrFenced)

// Member is one replica of a ring. Build it with New, start it with Run,
// and ask Begin before each reconcile. Its methods are safe for
// concurrent use; only one Run may run at a time, and a Member runs once.
type Member struct {
	cfg    Config
	name   string // this member's Lease
	leases *client.Client[*leader.Lease]
	log    *slog.Logger
	m      memberMetrics
	ran    atomic.Bool
	// changed carries one pending "the gate changed" signal. It has room
	// for one so the round never blocks on a slow reader and several
	// changes coalesce into one wake-up.
	changed chan struct{}
	mu      sync.Mutex
	g       gate // guarded by mu
	// term runs to the renew deadline (leader.Term): extended by each
	// renew, ended by its own timer at the deadline or by a fence; nil
	// before the first renew. Guarded by mu (the pointer; Term has its
	// own lock).
	term      *leader.Term
	inflight  map[string]int // keys being reconciled or written (Begin, BeginWrite without done); guarded by mu
	changedAt time.Time      // when the target ring last changed; guarded by mu
	stopped   bool           // Run's work has ended: nothing more starts; guarded by mu
	// landing holds the keys a hold of which was cut (leader.Term.Hold: a
	// write with an unknown outcome, or one cut off by a deadline), with
	// the instant until which that write may still reach the server (the
	// cut plus the margin). Until then the key counts as in flight for
	// the handover: the ring that gives it away is not published, so its
	// next owner cannot pass the barrier while the write may still land.
	// Guarded by mu; an entry goes once its instant has passed.
	landing map[string]time.Time

	// Only Run's goroutine touches these.
	view view
	own  *leader.Lease // this member's Lease as last read or written; nil: none yet
	held bool          // a write of own succeeded in this run: a release of it is not ours to undo
	// sawOwn is set at the first list that showed own; inherited is, when
	// that Lease named this identity without this run having written it,
	// the margin after that list: no barrier passes before it (inheritAt).
	sawOwn    bool
	inherited time.Time
}

// New validates cfg and returns a Member. It starts nothing and does not
// contact the server.
func New(cfg Config) (*Member, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Member{cfg: cfg, name: LeaseName(cfg.Ring, cfg.Identity),
		leases:  client.For(cfg.Client, kube.Typed[*leader.Lease](kube.Leases), client.Options{FieldManager: "kwatch-shard"}),
		log:     cfg.Logger.With("ring", cfg.Ring, "identity", cfg.Identity),
		changed: make(chan struct{}, 1), inflight: map[string]int{}, landing: map[string]time.Time{}}
	m.g.me = cfg.Identity
	m.m = newMetrics(cfg.Metrics, cfg.Namespace+"/"+cfg.Ring, m)
	return m, nil
}

// Identity is the member's identity on the ring.
func (m *Member) Identity() string { return m.cfg.Identity }

// Begin asks to start reconciling key. It returns false when the key is
// not this member's now: owned by another member, gained but waiting
// for the handover barrier, or the member is fenced or not yet renewed.
// When true, the caller reconciles with the returned context (cancelled
// at the member's renew deadline, by a timer whatever Run is doing, if
// no renew moved it, at a fence, or when ctx ends) and calls done once
// the reconcile has returned; until then the member does not hand the
// key over.
func (m *Member) Begin(ctx context.Context, key string) (rctx context.Context, done func(), ok bool) {
	m.mu.Lock()
	term := m.term
	if !m.liveLocked() || !m.g.allows(key) {
		m.mu.Unlock()
		return ctx, func() {}, false
	}
	m.inflight[key]++
	m.mu.Unlock()
	rctx, end := m.hold(ctx, term, key)
	return rctx, func() { end(false) }, true
}

// BeginWrite asks whether a write for key may leave now: while the
// member's term holds and the key is either in flight here (a Begin or
// BeginWrite without its done: the handover waits for it) or allowed to
// start. When true, the write is sent with the returned context
// (cancelled when the term ends) and done is called once its answer was
// read, with unknown true when its outcome is not known (no answer, or
// an answer that says it may still be applied: kube.OutcomeUnknown).
// Until done the key's handover waits, as for a reconcile; after an
// unknown outcome, or a write cut off by the term's end or its own
// deadline, it waits until the margin (leader.Timing.Margin) after that.
// Package controller's write fence calls it for every write of a
// reconcile.
func (m *Member) BeginWrite(ctx context.Context, key string) (wctx context.Context, done func(unknown bool), ok bool) {
	m.mu.Lock()
	term := m.term
	if !m.liveLocked() || (m.inflight[key] == 0 && !m.g.allows(key)) {
		m.mu.Unlock()
		return ctx, func(bool) {}, false
	}
	m.inflight[key]++
	m.mu.Unlock()
	wctx, done = m.hold(ctx, term, key)
	return wctx, done, true
}

// liveLocked reports whether the member may act at all now: it has
// renewed, its term holds by the clock, and Run's work has not ended.
// The caller holds mu.
func (m *Member) liveLocked() bool {
	if m.stopped || m.term == nil {
		return false
	}
	_, ok := m.term.Until()
	return ok
}

// hold is the context and done of one Begin or BeginWrite of key, which
// the caller has counted in inflight: a hold of the term
// (leader.Term.Hold), whose cut keeps the key landing for the margin.
func (m *Member) hold(ctx context.Context, term *leader.Term, key string) (context.Context, func(unknown bool)) {
	hctx, end := term.Hold(ctx)
	var once sync.Once
	return hctx, func(unknown bool) {
		once.Do(func() {
			cut := end(unknown)
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.inflight[key]--; m.inflight[key] <= 0 {
				delete(m.inflight, key)
			}
			if cut {
				until := time.Now().Add(m.cfg.Margin())
				if until.After(m.landing[key]) {
					m.landing[key] = until
				}
			}
		})
	}
}

// heldLocked returns the keys the handover waits for at now: those in
// flight and those a cut write of which may still land. Landing entries
// that have passed go. The caller holds mu.
func (m *Member) heldLocked(now time.Time) map[string]int {
	if len(m.landing) == 0 {
		return m.inflight
	}
	held := maps.Clone(m.inflight)
	for k, until := range m.landing {
		if !now.Before(until) {
			delete(m.landing, k)
			continue
		}
		held[k]++
	}
	return held
}

// Owns reports whether key may start a reconcile on this member now (as
// Begin would, without starting one).
func (m *Member) Owns(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.liveLocked() && m.g.allows(key)
}

// Term is the member's term (leader.Term): whether it may act now by
// the local clock, and a context cancelled at its renew deadline, its
// fence, or when Run's work has returned (before the release). Nil
// before the first renew.
func (m *Member) Term() *leader.Term {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.term
}

// Changed receives after each change of the keys this member may
// reconcile: a new ring, a published version, a passed barrier, a
// fence. Several changes may arrive as one. A controller lists its
// cache and enqueues the keys Owns now allows.
func (m *Member) Changed() <-chan struct{} { return m.changed }

// Status is a member's view of its ring.
type Status struct {
	// Members are the identities this member sees live, sorted.
	Members []string
	// Target is the version of their ring; Published, the version this
	// member's Lease is known to carry; Settled, the version of the ring
	// of the last passed barrier ("" before the first).
	Target, Published, Settled string
	// Settles counts the barriers this member has passed. It grows at
	// every handover, also to a ring whose version was settled before
	// (members that leave and come back give the ring its old version),
	// so work due once per handover keys on it, not on Settled.
	Settles uint64
	// Fenced is true once the member fenced itself.
	Fenced bool
}

// Status returns the member's view now.
func (m *Member) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Status{Members: append([]string(nil), m.g.target.Members()...), Target: m.g.target.Version(),
		Published: m.g.published.Version(), Settled: m.g.settledVersion(), Settles: m.g.settles, Fenced: m.g.fenced}
}

// Ring is the target ring: who owns what once the current handover is
// done.
func (m *Member) Ring() *Ring {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.g.target
}

func (m *Member) notify() {
	select {
	case m.changed <- struct{}{}:
	default: // a signal is already pending; it covers this change
	}
}

// fence makes the member stop: nothing more starts, and the contexts of
// reconciles in flight are cancelled.
func (m *Member) fence(cause error) {
	m.mu.Lock()
	m.g.fenced = true
	term := m.term
	m.mu.Unlock()
	if term != nil {
		term.End(cause)
	}
	m.notify()
}
