package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwatch/kwatch/events"
	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/shard"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
	"github.com/kwatch/kwatch/webhook"
)

// DefaultShutdownTimeout bounds how long in-flight reconciles may run after
// the manager's context ends.
const DefaultShutdownTimeout = 30 * time.Second

// ManagerOptions configure a Manager. Every field is optional.
type ManagerOptions struct {
	// Namespace limits every cache to one namespace; "" caches all. It is
	// the namespace of the zero kube.Scope of every cache and source.
	Namespace string
	// Logger receives the manager's, the informers' and the controllers'
	// logs, each line carrying its controller and key; slog.Default().
	Logger *slog.Logger
	// Metrics receives the workqueue_* and kwatch_reconcile_* series of
	// every controller (labelled with its name); none by default.
	Metrics metrics.Provider
	// ShutdownTimeout bounds the in-flight reconciles after Run's context
	// ends (an ordinary shutdown, with the Lease still renewed); a lost
	// Lease cancels them at once instead. DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// InformerTuning, if set, is the tuning of each informer the manager
	// builds (list mode, page size, backoff, timeouts, store mode; see
	// informer.Tuning), by resource; the zero Tuning is the informer's
	// defaults. What an informer watches (client, resource, scope) is the
	// manager's.
	InformerTuning func(res kube.Resource) informer.Tuning
	// LeaderElection, if set, makes Run campaign for its Lease: the caches
	// fill at once, the controllers start only once this process leads,
	// and the Lease is released after they stopped. At the renew deadline
	// every in-flight reconcile's context is cancelled at once, no
	// reconcile starts, and writes through Client are refused before they
	// are sent (fence.go), so nothing this replica does outlasts the
	// margin LeaseDuration - RenewDeadline; ShutdownTimeout plays no part
	// there. Client, Logger and Metrics default to the manager's. Nil runs
	// the controllers at once.
	LeaderElection *leader.Config
	// Sharding, if set, makes this process one replica of a ring that
	// splits every controller's keys (package shard): each key is
	// reconciled only by the replica the ring gives it to, and handed
	// over without overlap. Logger and Metrics default to the manager's,
	// Client too, but give it a client of its own: renews that queue
	// behind busy reconciles in one token bucket miss the renew deadline
	// and fence the replica. It excludes LeaderElection. As there, a
	// fenced replica's reconciles are cancelled at its renew deadline,
	// and writes through Client for a key the replica does not own now
	// are refused (fence.go).
	Sharding *shard.Config
	// ExpectationTimeout bounds how long a key's next reconcile waits for
	// the caches to show the writes its last reconcile made through the
	// manager's client, and how long a Reader's Get waits to show this
	// process's own write of an object (expect.go). Zero means
	// DefaultExpectationTimeout; a negative value records nothing, and
	// reconciles and reads never wait.
	ExpectationTimeout time.Duration
	// Webhook, if set, is the admission and conversion webhook server the
	// manager runs on every replica from the start of Run until its
	// controllers stopped; /readyz waits for it to serve (manager_webhook.go).
	Webhook *webhook.Server
}

// Manager owns what a process's controllers share: one connection, one
// informer per (type, resource) shared by every controller and reader,
// the controllers, and their goroutines. Build it with NewManager, add
// controllers with New and caches with Cache, then Run. Its constructor
// starts nothing.
type Manager struct {
	// c is the connection as given: informers, Leases and events use it.
	c *kube.Client
	// writer is c with the write fence (fence.go): what Client hands out.
	writer *kube.Client
	fence  *fence
	opts   ManagerOptions
	log    *slog.Logger
	// elector runs for ManagerOptions.LeaderElection's Lease; nil without.
	elector *leader.Elector
	// member runs for ManagerOptions.Sharding's ring; nil without.
	member *shard.Member
	// expect records the reconciles' writes and gates their keys on them;
	// nil when ExpectationTimeout is negative.
	expect *expectations

	// informers runs the caches' informers (informers.go).
	informers informerRunner

	mu     sync.Mutex
	caches map[cacheKey]*cacheEntry // one informer each; guarded by mu
	// byRes is caches' values by resource, replaced whenever caches
	// changes: the expectations read it under their own lock, which mu
	// must not be taken under.
	byRes       atomic.Pointer[map[resKey][]*cacheEntry]
	controllers []*Controller      // guarded by mu
	recorders   []*events.Recorder // guarded by mu
	indexers    map[cacheKey]any   // map[string]store.IndexFunc[T] waiting for their informer; guarded by mu
	running     bool               // guarded by mu
	// scans are the sharded controllers' handover scans (shard.go),
	// added by New; guarded by mu.
	scans []*shardFilter
}

type cacheKey struct {
	typ   reflect.Type
	res   string
	scope kube.Scope
}

// resolve fills the manager's namespace into a scope's empty one: the
// zero kube.Scope of a cache, a source or ForScope is the manager's
// (ManagerOptions.Namespace, no selectors). Caches of the same type and
// resource in different scopes are different informers (each its own
// list and watch).
func (m *Manager) resolve(sc kube.Scope) kube.Scope {
	if sc.Namespace == "" {
		sc.Namespace = m.opts.Namespace
	}
	return sc
}

func (m *Manager) keyOf(typ reflect.Type, res kube.Resource, sc kube.Scope) cacheKey {
	return cacheKey{typ: typ, res: res.GroupVersion() + "/" + res.Resource, scope: m.resolve(sc)}
}

type cacheEntry struct {
	inf    any // *informer.Informer[T]
	run    func(context.Context) error
	name   string
	health func() informer.Health
	synced func() bool
	// What the expectations read (expect_cache.go): the resource and
	// scope the cache holds, its store's resourceVersion, and what it
	// holds of one object.
	res     resKey
	scope   kube.Scope
	storeRV func() string
	state   func(key string, deleting bool) objState
}

// NewManager returns a manager on c. It does not contact the server.
func NewManager(c *kube.Client, opts ManagerOptions) (*Manager, error) {
	if c == nil {
		return nil, errors.New("controller: NewManager needs a *kube.Client")
	}
	if err := (kube.Scope{Namespace: opts.Namespace}).Validate(); err != nil {
		return nil, fmt.Errorf("controller: ManagerOptions.Namespace: %w", err)
	}
	if opts.ShutdownTimeout < 0 {
		return nil, fmt.Errorf("controller: ManagerOptions.ShutdownTimeout %v is negative", opts.ShutdownTimeout)
	}
	if opts.ShutdownTimeout == 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	m := &Manager{c: c, opts: opts, log: log, caches: map[cacheKey]*cacheEntry{}}
	if opts.ExpectationTimeout == 0 {
		opts.ExpectationTimeout = DefaultExpectationTimeout
		m.opts.ExpectationTimeout = opts.ExpectationTimeout
	}
	if opts.ExpectationTimeout > 0 {
		m.expect = newExpectations(opts.ExpectationTimeout, log, opts.Metrics, m.holders)
		m.expect.uncertainHolders, m.expect.serverRV = m.uncertainHolders, m.serverRV
		m.expect.cachesOf = m.cachesOf
	}
	if le := opts.LeaderElection; le != nil {
		cfg := *le
		cfg.Client = cmp.Or(cfg.Client, c)
		cfg.Logger = cmp.Or(cfg.Logger, log)
		cfg.Metrics = cmp.Or(cfg.Metrics, opts.Metrics)
		var err error
		if m.elector, err = leader.New(cfg); err != nil {
			return nil, err
		}
	}
	if opts.Sharding != nil {
		var err error
		if m.member, err = newMember(m); err != nil {
			return nil, err
		}
	}
	// The manager's client: its accepted writes are recorded for the
	// expectations, and each write passes the fence just before it leaves.
	m.fence, m.writer = newFence(m), c
	if m.expect != nil {
		m.writer = m.writer.WithWriteRecorder(m.expect.record)
	}
	if m.fence.active() {
		m.writer = m.writer.WithWriteInterceptor(m.fence.intercept)
	}
	return m, nil
}

// Client is the manager's connection, for writes (package client) and
// discovery. Under LeaderElection or Sharding its writes are fenced: a
// write is refused before it is sent (kube.IsFenced) once this replica
// no longer leads, or no longer owns the key of the reconcile whose
// context the write carries (fence.go). Pass the reconcile's context to
// its writes. The *kube.Client given to NewManager is not fenced.
func (m *Manager) Client() *kube.Client { return m.writer }

// Recorder returns an event recorder writing as component (source.component
// and the writes' field manager). The manager runs it: it starts with Run
// and stops after the controllers' last reconcile, so a reconcile may
// record events until it returns. Call it before Run.
func (m *Manager) Recorder(component string) (*events.Recorder, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running {
		return nil, errors.New("controller: Recorder after Manager.Run")
	}
	r, err := events.New(events.Options{Client: m.c, Component: component, Metrics: m.opts.Metrics,
		Logger: m.log.With("recorder", component)})
	if err != nil {
		return nil, err
	}
	m.recorders = append(m.recorders, r)
	return r, nil
}

// Informer returns the manager's shared informer of res, building it on
// first use; the manager's Run starts it (at once when Run is already
// running). Every caller asking for the same type and resource shares it.
// What it hands out reads and adds handlers; the informer's lifecycle
// stays the manager's (see SharedInformer).
func Informer[T watch.Object](m *Manager, res kube.TypedResource[T]) (*SharedInformer[T], error) {
	return InformerIn(m, res, kube.Scope{})
}

// InformerIn is Informer for the cache of res in scope.
func InformerIn[T watch.Object](m *Manager, res kube.TypedResource[T], scope kube.Scope) (*SharedInformer[T], error) {
	if res.IsZero() {
		return nil, errors.New("controller: Informer of the zero kube.TypedResource")
	}
	inf, err := informerIn[T](m, res.Resource(), scope)
	if err != nil {
		return nil, err
	}
	return &SharedInformer[T]{inf: inf}, nil
}

// informerIn is InformerIn for a resource whose pairing with T was
// checked by its caller's kube.TypedResource.
func informerIn[T watch.Object](m *Manager, res kube.Resource, scope kube.Scope) (*informer.Informer[T], error) {
	key := m.keyOf(reflect.TypeFor[T](), res, scope)
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.caches[key]; ok {
		return e.inf.(*informer.Informer[T]), nil
	}
	if err := key.scope.Validate(); err != nil {
		return nil, fmt.Errorf("controller: cache of %s: %w", res, err)
	}
	opts := informer.Options[T]{Client: m.c, Resource: res, Scope: key.scope,
		Logger: m.log.With("resource", res.String())}
	if ix, ok := m.indexers[key]; ok {
		opts.Indexers = ix.(map[string]store.IndexFunc[T])
		delete(m.indexers, key)
	}
	if m.opts.InformerTuning != nil {
		opts.Tuning = m.opts.InformerTuning(res)
	}
	ownerIndexForStore(&opts)
	rk := resKeyOf(res)
	if m.expect != nil {
		// Every change the cache applies may show a write a key waits for.
		opts.OnApplied = func(k string) { m.expect.observed(rk, k) }
	}
	inf, err := informer.New(opts)
	if err != nil {
		return nil, err
	}
	name := res.String()
	if sc := key.scope; sc != (kube.Scope{Namespace: m.opts.Namespace}) {
		name = fmt.Sprintf("%s [%s]", name, sc)
	}
	for _, e := range m.caches {
		if e.name == name { // another type of the same resource
			name = fmt.Sprintf("%s (%v)", res, key.typ)
		}
	}
	if m.opts.Metrics != nil {
		err := informer.RegisterMetrics(m.opts.Metrics, inf, informer.MetricsOptions{Name: name, Objects: inf.Store().Len})
		if err != nil {
			return nil, err
		}
	}
	e := &cacheEntry{inf: inf, run: inf.Run, name: name, health: inf.Health, synced: inf.HasSynced,
		res: rk, scope: key.scope, storeRV: inf.Store().ResourceVersion, state: stateFunc(inf)}
	m.addCacheLocked(key, e)
	m.informers.addLocked(e) // started at once when Run is running
	return inf, nil
}

// addCacheLocked puts e in m.caches as key, and in m.byRes. m.mu is
// held.
func (m *Manager) addCacheLocked(key cacheKey, e *cacheEntry) {
	m.caches[key] = e
	byRes := map[resKey][]*cacheEntry{}
	for _, c := range m.caches {
		byRes[c.res] = append(byRes[c.res], c)
	}
	m.byRes.Store(&byRes)
}

// cachesOf is the manager's caches of res; it takes no lock.
func (m *Manager) cachesOf(res resKey) []*cacheEntry {
	if byRes := m.byRes.Load(); byRes != nil {
		return (*byRes)[res]
	}
	return nil
}

// Index adds an index to the cache of res, for Reader.ByIndex. It must
// come before the cache's first use (Cache, Informer, a controller's For,
// Owns or Watches of the same T and resource): an informer's indexes are
// fixed when it is built. fn sees every object the informer keeps; it
// must be cheap and must not change the object.
func Index[T watch.Object](m *Manager, res kube.TypedResource[T], name string, fn store.IndexFunc[T]) error {
	return IndexIn(m, res, kube.Scope{}, name, fn)
}

// IndexIn is Index for the cache of res in scope.
func IndexIn[T watch.Object](m *Manager, res kube.TypedResource[T], scope kube.Scope, name string, fn store.IndexFunc[T]) error {
	if res.IsZero() {
		return fmt.Errorf("controller: Index %q on the zero kube.TypedResource", name)
	}
	return indexIn(m, res.Resource(), scope, name, fn)
}

func indexIn[T watch.Object](m *Manager, res kube.Resource, scope kube.Scope, name string, fn store.IndexFunc[T]) error {
	key := m.keyOf(reflect.TypeFor[T](), res, scope)
	if err := key.scope.Validate(); err != nil {
		return fmt.Errorf("controller: Index %q on %s: %w", name, res, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.caches[key]; ok {
		return fmt.Errorf("controller: Index %q on %s: the cache is already built; add indexes before its first use", name, res)
	}
	if m.indexers == nil {
		m.indexers = map[cacheKey]any{}
	}
	ix, _ := m.indexers[key].(map[string]store.IndexFunc[T])
	if ix == nil {
		ix = map[string]store.IndexFunc[T]{}
		m.indexers[key] = ix
	}
	if _, dup := ix[name]; dup || name == "namespace" {
		return fmt.Errorf("controller: Index %q on %s is already defined", name, res)
	}
	ix[name] = fn
	return nil
}

// Run starts the informers and the controllers, and blocks until ctx ends.
// Then it shuts down in order: controllers stop taking work and let
// in-flight reconciles finish within ShutdownTimeout, then the informers
// stop. It returns after every goroutine it started has ended, with the
// controllers' and informers' errors joined. With LeaderElection the
// controllers run only while this process leads (the informers from the
// start), and a lost lease ends Run with an error wrapping leader.ErrLost.
// A Manager runs once.
func (m *Manager) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.running {
		m.mu.Unlock()
		return errors.New("controller: Manager.Run called twice")
	}
	m.running = true
	ctls := append([]*Controller(nil), m.controllers...)
	recs := append([]*events.Recorder(nil), m.recorders...)
	infCtx, stopInformers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopInformers()
	m.informers.startLocked(infCtx, m.caches)
	m.mu.Unlock()
	ctx, stopWebhook := m.startWebhook(ctx)
	// Recorders outlive the controllers' drain, as the informers do.
	var recWG sync.WaitGroup
	for _, r := range recs {
		recWG.Go(func() { _ = r.Run(infCtx) })
	}

	// A controller that fails stops the others: the manager is one unit.
	errs := make([]error, len(ctls))
	runControllers := func(ctx context.Context) {
		runCtx, stopRun := context.WithCancel(ctx)
		defer stopRun()
		var wg sync.WaitGroup
		for i, c := range ctls {
			wg.Go(func() {
				if errs[i] = c.run(runCtx); errs[i] != nil {
					m.log.Error("controller failed; stopping the manager", "controller", c.name, "error", errs[i])
					stopRun()
				}
			})
		}
		<-runCtx.Done()
		wg.Wait()
	}
	if m.elector != nil {
		// The controllers run while this process leads; a lost lease ends
		// Run with leader.ErrLost, after they stopped.
		lerr := m.elector.Run(ctx, runControllers)
		errs = append(errs, lerr)
	} else if m.member != nil {
		// The controllers run on every replica, each key only where the
		// ring puts it; a fenced member ends Run with shard.ErrFenced.
		errs = append(errs, m.member.Run(ctx, m.runSharded(runControllers)))
	} else {
		runControllers(ctx)
	}
	m.log.Info("controllers stopped; stopping informers")
	m.expect.stop()
	errs = append(errs, stopWebhook())
	m.mu.Lock()
	m.informers.stopLocked()
	m.mu.Unlock()
	stopInformers()
	recWG.Wait()
	return errors.Join(append(errs, m.informers.wait())...)
}

// Synced reports whether every informer of the manager has synced.
func (m *Manager) Synced() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.caches {
		if !e.synced() {
			return false
		}
	}
	return true
}

// InformerHealth is the health of one of the manager's informers.
type InformerHealth struct {
	Name string
	informer.Health
}

// Health reports every informer's health, by name.
func (m *Manager) Health() []InformerHealth {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]InformerHealth, 0, len(m.caches))
	for _, e := range m.caches {
		out = append(out, InformerHealth{Name: e.name, Health: e.health()})
	}
	return out
}
