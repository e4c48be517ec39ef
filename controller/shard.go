package controller

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/queue"
	"github.com/kwatch/kwatch/shard"
	"github.com/kwatch/kwatch/watch"
)

// maxParked bounds the keys a sharded controller remembers having
// dropped while their handover was pending (see shardFilter.parked).
const maxParked = 1 << 16

// newMember builds the manager's ring member from ManagerOptions.Sharding.
func newMember(m *Manager) (*shard.Member, error) {
	if m.opts.LeaderElection != nil {
		return nil, errors.New("controller: ManagerOptions.LeaderElection and Sharding exclude each other: a sharded controller runs on every replica")
	}
	cfg := *m.opts.Sharding
	cfg.Client = cmp.Or(cfg.Client, m.c)
	cfg.Logger = cmp.Or(cfg.Logger, m.log)
	cfg.Metrics = cmp.Or(cfg.Metrics, m.opts.Metrics)
	return shard.New(cfg)
}

// wrapFor is the manager's wrapping of a controller: nothing without
// sharding; with it, the primary objects' scopes of the mode (Label mode
// watches the objects labelled for this replica and the unlabelled
// ones), the shard gate, and the source of the keys this replica gains.
func wrapFor[P watch.Object](m *Manager, cfg Config[P]) (wrapping, error) {
	if m.member == nil {
		return wrapping{scopes: []kube.Scope{cfg.ForScope}, gate: func(r Reconciler) Reconciler { return r }}, nil
	}
	f, err := newShardFilter(m, cfg.Name, cfg)
	if err != nil {
		return wrapping{}, err
	}
	scopes := []kube.Scope{cfg.ForScope}
	if labelMode(m) {
		scopes = []kube.Scope{m.ShardScope(cfg.ForScope), m.unlabelledScope(cfg.ForScope)}
	}
	return wrapping{scopes: scopes, gate: f.wrap, sources: []Source{f}}, nil
}

// shardFilter is a sharded controller's gate and the source of the keys
// it gains. The controller's queue still receives every key; a worker
// asks the member before each reconcile and drops the keys that are not
// this replica's now. When the member's keys change, the filter
// enqueues every key of the primary cache it gained, and the dropped
// keys it now owns.
type shardFilter struct {
	member  *shard.Member
	keys    func() []string // the primary cache's keys
	enqueue enqueueFunc     // set by start, before Run

	mu sync.Mutex
	// parked are keys dropped because their handover to this replica was
	// pending: owned by it under the target ring, not yet allowed. A key
	// that is in the cache is found again by the scan anyway; parked
	// covers the keys of objects deleted meanwhile. At most maxParked;
	// guarded by mu.
	parked map[Key]struct{}
	// owned are the cache keys Owns allowed at the last scan: a scan
	// enqueues only keys not among them. Guarded by mu.
	owned map[string]struct{}
	// label moves objects to this replica in Label mode; nil in Filter mode.
	label *labeler
}

func newShardFilter[P watch.Object](m *Manager, name string, cfg Config[P]) (*shardFilter, error) {
	var inf interface{ ListKeys() []string }
	if !labelMode(m) {
		full, err := InformerIn[P](m, cfg.For, cfg.ForScope)
		if err != nil {
			return nil, err
		}
		inf = full.Store()
	}
	var err error
	f := &shardFilter{member: m.member, parked: map[Key]struct{}{}}
	if inf != nil {
		f.keys = inf.ListKeys
	}
	if labelMode(m) {
		if f.label, f.keys, err = newLabeler(m, cfg); err != nil {
			return nil, err
		}
	}
	if p := cmp.Or(m.opts.Metrics, m.opts.Sharding.Metrics); p != nil {
		p.GaugeFunc("kwatch_shard_keys_owned",
			"Keys of the controller's primary cache this replica may reconcile now.",
			f.countOwned, metrics.Label{Name: "name", Value: name})
	}
	return f, nil
}

func (f *shardFilter) String() string { return "shard handovers" }

// start makes f the source of the keys its controller gains, scanned by
// the manager's runSharded.
func (f *shardFilter) start(m *Manager, _ kube.Resource, enqueue enqueueFunc) (func(context.Context) bool, error) {
	f.enqueue = enqueue
	m.mu.Lock()
	m.scans = append(m.scans, f)
	m.mu.Unlock()
	return func(context.Context) bool { return true }, nil
}

// wrap gates next: a key this replica may not reconcile now is dropped
// (parked when its handover to this replica is pending).
func (f *shardFilter) wrap(next Reconciler) Reconciler {
	return func(ctx context.Context, key Key) (Result, error) {
		k := key.String()
		rctx, done, ok := f.member.Begin(ctx, k)
		if !ok {
			if f.member.Ring().Owner(k) == f.member.Identity() {
				f.park(key)
			}
			return Result{}, nil
		}
		defer done()
		if f.label != nil {
			if ready, err := f.label.prepare(rctx, key); !ready {
				return Result{}, err
			}
		}
		return next(rctx, key)
	}
}

func (f *shardFilter) park(key Key) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.parked) < maxParked {
		f.parked[key] = struct{}{}
	}
}

// scan enqueues the keys this replica gained since the last scan: cache
// keys Owns allows now and did not then, and parked keys it owns now.
// Parked keys that went to another member are forgotten.
//
// The gained keys are a backlog, like an informer's initial list: they
// confirm what this replica takes over, so they wait at low priority and
// the changes of the keys it already had are not queued behind hundreds
// of them (the queue's aging serves each within its MaxLowWait). A
// parked key was dropped at an event during its handover, perhaps a
// change: it goes at normal priority, as the event would have.
func (f *shardFilter) scan() {
	owned := map[string]struct{}{}
	var backlog, dropped []Key
	f.mu.Lock()
	prev := f.owned
	f.mu.Unlock()
	for _, k := range f.keys() {
		if !f.member.Owns(k) {
			continue
		}
		owned[k] = struct{}{}
		if _, was := prev[k]; !was {
			backlog = append(backlog, ParseKey(k))
		}
	}
	ring, me := f.member.Ring(), f.member.Identity()
	f.mu.Lock()
	f.owned = owned
	for k := range f.parked {
		s := k.String()
		switch {
		case f.member.Owns(s):
			delete(f.parked, k)
			_, cached := owned[s]
			if _, was := prev[s]; !cached || !was { // not cached, or in backlog: moved up
				dropped = append(dropped, k)
			}
		case ring.Owner(s) != me:
			delete(f.parked, k)
		}
	}
	f.mu.Unlock()
	if f.label != nil {
		backlog = append(backlog, f.label.gainedElsewhere(f.member)...)
	}
	for _, k := range backlog {
		f.enqueue(k, queue.PriorityLow)
	}
	for _, k := range dropped {
		f.enqueue(k, queue.PriorityNormal)
	}
}

// retryAt is when a failed Label-mode list is due again; zero when none
// is (or in Filter mode).
func (f *shardFilter) retryAt() time.Time {
	if f.label == nil {
		return time.Time{}
	}
	return f.label.retryAt()
}

// earliest is the earlier of two times, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func (f *shardFilter) countOwned() float64 {
	n := 0
	for _, k := range f.keys() {
		if f.member.Owns(k) {
			n++
		}
	}
	return float64(n)
}

// rescanPeriod is how often a sharded controller scans again without a
// change of the ring.
const rescanPeriod = 10 * time.Second

// runSharded is the manager's work under a ring member: the controllers,
// and one goroutine that has each sharded controller scan its cache on
// every change of the member's keys, every rescanPeriod, and when a
// Label-mode list that failed is due again. It returns when both have.
func (m *Manager) runSharded(runControllers func(context.Context)) func(context.Context) {
	m.mu.Lock()
	scans := append([]*shardFilter(nil), m.scans...)
	m.mu.Unlock()
	return func(ctx context.Context) {
		var wg sync.WaitGroup
		wg.Go(func() {
			tk := time.NewTicker(rescanPeriod)
			defer tk.Stop()
			retry := time.NewTimer(time.Hour)
			retry.Stop()
			defer retry.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-m.member.Changed():
				case <-tk.C:
				case <-retry.C:
				}
				var next time.Time
				for _, f := range scans {
					f.scan()
					next = earliest(next, f.retryAt())
				}
				if !next.IsZero() {
					retry.Reset(time.Until(next))
				}
			}
		})
		runControllers(ctx)
		wg.Wait()
	}
}

// Shard is the manager's ring member (ManagerOptions.Sharding), for its
// Status and Ring; nil when the manager is not sharded.
func (m *Manager) Shard() *shard.Member { return m.member }
