package shard

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
)

// ErrFenced is returned by Run when the member fenced itself: no renew
// of its Lease succeeded within RenewDeadline, or its Lease was deleted
// or taken by another identity. Every reconcile had stopped (or had its
// context cancelled) before the other members could judge it dead.
// Errors from Run wrap it with the reason.
var ErrFenced = errors.New("shard: fenced: the member's lease could not be renewed")

// Member is one replica of a ring. Build it with New, start it with Run,
// and ask Begin before each reconcile. Its methods are safe for
// concurrent use; only one Run may run at a time, and a Member runs once.
type Member struct {
	cfg    Config
	name   string // this member's Lease
	leases *client.Resource[*leader.Lease]
	log    *slog.Logger
	m      memberMetrics
	ran    atomic.Bool
	// changed carries one pending "the gate changed" signal. It has room
	// for one so the round never blocks on a slow reader and several
	// changes coalesce into one wake-up.
	changed chan struct{}
	// fenced ends when the member fences itself; reconciles' contexts
	// are cancelled with it.
	fenced     context.Context
	fenceStart context.CancelFunc

	mu        sync.Mutex
	g         gate           // guarded by mu
	deadline  time.Time      // the renew deadline; zero before the first renew; guarded by mu
	inflight  map[string]int // keys being reconciled (Begin without done); guarded by mu
	changedAt time.Time      // when the target ring last changed; guarded by mu
	stopped   bool           // Run's work has ended: nothing more starts; guarded by mu

	// Only Run's goroutine touches these.
	view view
	own  *leader.Lease // this member's Lease as last read or written; nil: none yet
}

// New validates cfg and returns a Member. It starts nothing and does not
// contact the server.
func New(cfg Config) (*Member, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Member{cfg: cfg, name: LeaseName(cfg.Ring, cfg.Identity),
		leases:  client.For[*leader.Lease](cfg.Client, kube.Leases, client.Options{FieldManager: "kwatch-shard"}),
		log:     cfg.Logger.With("ring", cfg.Ring, "identity", cfg.Identity),
		changed: make(chan struct{}, 1), inflight: map[string]int{}}
	m.fenced, m.fenceStart = context.WithCancel(context.Background())
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
// if the member fences, or when ctx ends) and calls done once the
// reconcile has returned; until then the member does not hand the key
// over.
func (m *Member) Begin(ctx context.Context, key string) (rctx context.Context, done func(), ok bool) {
	m.mu.Lock()
	if m.stopped || !time.Now().Before(m.deadline) || !m.g.allows(key) {
		m.mu.Unlock()
		return ctx, func() {}, false
	}
	m.inflight[key]++
	m.mu.Unlock()
	rctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(m.fenced, cancel)
	var once sync.Once
	return rctx, func() {
		once.Do(func() {
			stop()
			cancel()
			m.mu.Lock()
			if m.inflight[key]--; m.inflight[key] <= 0 {
				delete(m.inflight, key)
			}
			m.mu.Unlock()
		})
	}, true
}

// Owns reports whether key may start a reconcile on this member now (as
// Begin would, without starting one).
func (m *Member) Owns(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.stopped && time.Now().Before(m.deadline) && m.g.allows(key)
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
	// Fenced is true once the member fenced itself.
	Fenced bool
}

// Status returns the member's view now.
func (m *Member) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Status{Members: append([]string(nil), m.g.target.Members()...), Target: m.g.target.Version(),
		Published: m.g.published.Version(), Settled: m.g.settledVersion(), Fenced: m.g.fenced}
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
func (m *Member) fence() {
	m.mu.Lock()
	m.g.fenced = true
	m.mu.Unlock()
	m.fenceStart()
	m.notify()
}
