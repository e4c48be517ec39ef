package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/kwatch/kwatch/events"
	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/shard"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// DefaultShutdownTimeout bounds how long in-flight reconciles may run after
// the manager's context ends.
const DefaultShutdownTimeout = 30 * time.Second

// ManagerOptions configure a Manager. Every field is optional.
type ManagerOptions struct {
	// Namespace limits every cache to one namespace; "" caches all.
	Namespace string
	// Logger receives the manager's, the informers' and the controllers'
	// logs, each line carrying its controller and key; slog.Default().
	Logger *slog.Logger
	// Metrics receives the workqueue_* and kwatch_reconcile_* series of
	// every controller (labelled with its name); none by default.
	Metrics metrics.Provider
	// ShutdownTimeout bounds the in-flight reconciles after Run's context
	// ends; DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// InformerOptions, if set, adjusts the options of each informer the
	// manager starts (list mode, timeouts, backoff); the identity fields
	// (client, resource, namespace, selectors) are the manager's.
	InformerOptions func(res kube.Resource) InformerTuning
	// LeaderElection, if set, makes Run campaign for its Lease: the caches
	// fill at once, the controllers start only once this process leads,
	// are cancelled (and their reconciles drained) when leadership is lost,
	// and the Lease is released after they stopped. Client, Logger and
	// Metrics default to the manager's. Nil runs the controllers at once.
	// In-flight reconciles of a leader that lost its Lease may go on for
	// ShutdownTimeout: keep it under LeaseDuration - RenewDeadline, the
	// margin before another replica can lead (package leader's doc.go).
	LeaderElection *leader.Config
	// Sharding, if set, makes this process one replica of a ring that
	// splits every controller's keys (package shard): each key is
	// reconciled only by the replica the ring gives it to, and handed
	// over without overlap. Logger and Metrics default to the manager's,
	// Client too, but give it a client of its own: renews that queue
	// behind busy reconciles in one token bucket miss the renew deadline
	// and fence the replica. It excludes LeaderElection. As there, keep
	// ShutdownTimeout under LeaseDuration - RenewDeadline.
	Sharding *shard.Config
}

// InformerTuning are the informer options a manager lets callers set.
type InformerTuning struct {
	ListMode     informer.ListMode
	PageSize     int64
	ResyncPeriod time.Duration
	IdleTimeout  time.Duration
	Backoff      informer.Backoff
	// Store and DecodeCache pick the informer's store mode (see
	// informer.StoreCompact): a compact cache decodes on read, so a
	// controller whose sources have no predicates never decodes an event,
	// and each reconcile's Get pays one decode per object version.
	Store       informer.StoreMode
	DecodeCache int
}

// Manager owns what a process's controllers share: one connection, one
// informer per (type, resource) shared by every controller and reader,
// the controllers, and their goroutines. Build it with NewManager, add
// controllers with New and caches with Cache, then Run. Its constructor
// starts nothing.
type Manager struct {
	c    *kube.Client
	opts ManagerOptions
	log  *slog.Logger
	reg  informer.Registry
	// elector runs for ManagerOptions.LeaderElection's Lease; nil without.
	elector *leader.Elector
	// member runs for ManagerOptions.Sharding's ring; nil without.
	member *shard.Member

	mu          sync.Mutex
	caches      map[cacheKey]*cacheEntry // guarded by mu
	controllers []*Controller            // guarded by mu
	recorders   []*events.Recorder       // guarded by mu
	indexers    map[cacheKey]any         // map[string]store.IndexFunc[T] waiting for their informer; guarded by mu
	running     bool                     // guarded by mu
}

type cacheKey struct {
	typ   reflect.Type
	res   string
	scope Scope
}

// Scope narrows a cache to a namespace and selectors. The zero Scope is the
// manager's: ManagerOptions.Namespace, no selectors. Caches of the same
// type and resource in different scopes are different informers (each its
// own list and watch).
type Scope struct {
	// Namespace overrides ManagerOptions.Namespace when not empty.
	Namespace     string
	LabelSelector string
	FieldSelector string
}

// resolve fills the manager's namespace into an empty one.
func (m *Manager) resolve(sc Scope) Scope {
	if sc.Namespace == "" {
		sc.Namespace = m.opts.Namespace
	}
	return sc
}

func (m *Manager) keyOf(typ reflect.Type, res kube.Resource, sc Scope) cacheKey {
	return cacheKey{typ: typ, res: res.GroupVersion() + "/" + res.Resource, scope: m.resolve(sc)}
}

type cacheEntry struct {
	inf    any // *informer.Informer[T]
	name   string
	health func() informer.Health
	synced func() bool
}

// NewManager returns a manager on c. It does not contact the server.
func NewManager(c *kube.Client, opts ManagerOptions) (*Manager, error) {
	if c == nil {
		return nil, errors.New("controller: NewManager needs a *kube.Client")
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
	return m, nil
}

// Client is the manager's connection, for writes (package client) and
// discovery.
func (m *Manager) Client() *kube.Client { return m.c }

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

// Informer returns the manager's shared informer of res as T, building it
// on first use; the manager's Run starts it (at once when Run is already
// running). Every caller asking for the same T and resource shares it.
func Informer[T watch.Object](m *Manager, res kube.Resource) (*informer.Informer[T], error) {
	return InformerIn[T](m, res, Scope{})
}

// InformerIn is Informer for the cache of res in scope.
func InformerIn[T watch.Object](m *Manager, res kube.Resource, scope Scope) (*informer.Informer[T], error) {
	key := m.keyOf(reflect.TypeFor[T](), res, scope)
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.caches[key]; ok {
		return e.inf.(*informer.Informer[T]), nil
	}
	opts := informer.Options[T]{Client: m.c, Resource: res, Namespace: key.scope.Namespace,
		LabelSelector: key.scope.LabelSelector, FieldSelector: key.scope.FieldSelector,
		Logger: m.log.With("resource", res.String())}
	if ix, ok := m.indexers[key]; ok {
		opts.Indexers = ix.(map[string]store.IndexFunc[T])
		delete(m.indexers, key)
	}
	if m.opts.InformerOptions != nil {
		t := m.opts.InformerOptions(res)
		opts.ListMode, opts.PageSize, opts.ResyncPeriod, opts.IdleTimeout, opts.Backoff =
			t.ListMode, t.PageSize, t.ResyncPeriod, t.IdleTimeout, t.Backoff
		opts.Store, opts.DecodeCache = t.Store, t.DecodeCache
	}
	inf, _, err := informer.Shared(&m.reg, opts) // held for the manager's life
	if err != nil {
		return nil, err
	}
	name := res.String()
	if sc := key.scope; sc != (Scope{Namespace: m.opts.Namespace}) {
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
	m.caches[key] = &cacheEntry{inf: inf, name: name, health: inf.Health, synced: inf.HasSynced}
	return inf, nil
}

// Index adds an index to the cache of res as T, for Reader.ByIndex. It must
// come before the cache's first use (Cache, Informer, a controller's For,
// Owns or Watches of the same T and resource): an informer's indexes are
// fixed when it is built. fn sees every object the informer keeps; it
// must be cheap and must not change the object.
func Index[T watch.Object](m *Manager, res kube.Resource, name string, fn store.IndexFunc[T]) error {
	return IndexIn(m, res, Scope{}, name, fn)
}

// IndexIn is Index for the cache of res in scope.
func IndexIn[T watch.Object](m *Manager, res kube.Resource, scope Scope, name string, fn store.IndexFunc[T]) error {
	key := m.keyOf(reflect.TypeFor[T](), res, scope)
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
	m.mu.Unlock()

	infCtx, stopInformers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopInformers()
	infDone := make(chan error, 1)
	go func() { infDone <- m.reg.Run(infCtx) }()
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
		errs = append(errs, m.member.Run(ctx, m.runSharded(ctls, runControllers)))
	} else {
		runControllers(ctx)
	}
	m.log.Info("controllers stopped; stopping informers")
	stopInformers()
	recWG.Wait()
	infErr := <-infDone
	if errors.Is(infErr, context.Canceled) {
		infErr = nil
	}
	return errors.Join(append(errs, infErr)...)
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

// String is "namespace=x,labels=y,fields=z" with the empty parts left out.
func (sc Scope) String() string {
	var parts []string
	if sc.Namespace != "" {
		parts = append(parts, "namespace="+sc.Namespace)
	}
	if sc.LabelSelector != "" {
		parts = append(parts, "labels="+sc.LabelSelector)
	}
	if sc.FieldSelector != "" {
		parts = append(parts, "fields="+sc.FieldSelector)
	}
	return strings.Join(parts, ",")
}
