package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/queue"
	"github.com/kwatch/kwatch/watch"
)

// Result tells the controller what to do after a reconcile without error:
// nothing, or the key again after a delay (RequeueAfter) or a rate-limited
// wait (Requeue).
type Result = queue.Result

// Reconciler brings the world in line with the object key names, reading
// it from the manager's caches and writing through package client. An
// error retries the key with per-key backoff, unless it is Terminal.
type Reconciler func(ctx context.Context, key Key) (Result, error)

// Config describes a controller of the primary type P.
type Config[P watch.Object] struct {
	// Name names the controller in logs and metrics (the workqueue's name).
	// Required, unique in the manager.
	Name string
	// For is the primary resource: a change of one of its objects enqueues
	// the object's key. Required.
	For kube.TypedResource[P]
	// ForScope narrows the primary objects to a namespace and selectors;
	// the zero kube.Scope is the manager's.
	ForScope kube.Scope
	// Predicates filter the changes of the primary objects that enqueue.
	Predicates []Predicate[P]
	// Owns and Watches are the other sources of keys (see Owns and
	// Watches).
	Owns    []Source
	Watches []Source
	// Reconcile is called with each key, whether its object exists or
	// not; it reads what it needs from the manager's caches. Exactly one
	// of Reconcile and ReconcileObject is set.
	Reconcile Reconciler
	// ReconcileObject is called with a copy of each key's primary object
	// (the caller's to change), read from the manager's cache of For in
	// ForScope (the replica's ShardScope in shard.Label mode) as
	// Reader.Get reads it: no older than this process's last write of it
	// through Manager.Client (a write of unknown outcome excepted), or a
	// *NotShownError once ExpectationTimeout passed and the cache still
	// does not show the write. The key passes the same gates as for
	// Reconcile first: the shard's, the wait for the caches to show the
	// key's last writes, the fence. A read that fails (a *NotShownError,
	// the context's end) is the reconcile's error, and retried.
	//
	// It is not called for a key whose object the cache does not hold:
	// one deleted (its delete event's key finds nothing), or a key from
	// Owns, Watches or Enqueue that names no primary object in scope. An
	// object being deleted is still there while it has finalizers, with
	// its DeletionTimestamp set, and is passed as any other: cleanup
	// behind a finalizer sees it. A controller whose cleanup runs after
	// the object is gone, without a finalizer (deleting what the garbage
	// collector would not), uses Reconcile, which gets that key.
	ReconcileObject func(ctx context.Context, obj P) (Result, error)
	// Workers reconcile different keys at once; one key is never
	// reconciled by two workers at once. Zero means 1.
	Workers int
	// RateLimiter paces retries of failed keys; queue.DefaultRateLimiter
	// (per-key exponential backoff and a token bucket) when nil.
	RateLimiter queue.RateLimiter[Key]
}

// Controller is a running controller of a Manager.
type Controller struct {
	name    string
	log     *slog.Logger
	runner  *queue.Runner[Key]
	synced  []func(context.Context) bool
	sources []string
}

// wrapping is what the manager puts around each of its controllers:
// nothing, or its sharding (shard.go). See wrapFor.
type wrapping struct {
	// scopes are where the primary objects are watched: the ForScope
	// itself, or the scopes sharding divides it into.
	scopes []kube.Scope
	// gate wraps the reconciler: whether a key is reconciled here, now.
	gate func(Reconciler) Reconciler
	// sources feed the queue beside For, Owns and Watches.
	sources []Source
}

// New adds a controller to m. Its informers are started by m.Run, its
// workers only once every informer it uses has synced.
func New[P watch.Object](m *Manager, cfg Config[P]) (*Controller, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	for _, c := range m.controllers {
		if c.name == cfg.Name {
			m.mu.Unlock()
			return nil, fmt.Errorf("controller: a controller named %q already exists", cfg.Name)
		}
	}
	running := m.running
	m.mu.Unlock()
	if running {
		return nil, errors.New("controller: New after Manager.Run")
	}
	log := m.log.With("controller", cfg.Name)
	c := &Controller{name: cfg.Name, log: log}
	wrap, err := wrapFor(m, cfg)
	if err != nil {
		return nil, err
	}
	inner := cfg.Reconcile
	if cfg.ReconcileObject != nil {
		if inner, err = objectReconciler(m, cfg); err != nil {
			return nil, fmt.Errorf("controller %q: %w", cfg.Name, err)
		}
	}
	// Inside the gate: a key this replica does not reconcile is not
	// parked for writes it will never make.
	reconcile := wrap.gate(m.expect.gate(cfg.Name, func(k Key) { c.runner.Add(k) }, inner))
	reconcile = m.fence.wrap(cfg.Name, reconcile)
	runner, err := queue.NewRunner(queue.RunnerOptions[Key]{
		Workers:      cfg.Workers,
		DrainTimeout: m.opts.ShutdownTimeout,
		Logger:       log,
		Queue: queue.RateLimitedOptions[Key]{RateLimiter: m.expect.limiter(cfg.Name, cfg.RateLimiter),
			Options: queue.Options{Name: cfg.Name, Metrics: m.opts.Metrics}},
		Reconcile: func(ctx context.Context, key Key) (Result, error) {
			res, err := reconcile(withLogger(ctx, keyLogger(log, key)), key)
			var term *terminalError
			if errors.As(err, &term) {
				log.Error("reconcile failed for good; not retried", "key", key.String(), "error", term.err)
				return Result{}, nil
			}
			return res, err
		},
	})
	if err != nil {
		return nil, err
	}
	c.runner = runner
	sources := append(forSources(cfg, wrap.scopes), cfg.Owns...)
	sources = append(sources, cfg.Watches...)
	sources = append(sources, wrap.sources...) // last: started only once every other one was
	for _, s := range sources {
		synced, err := s.start(m, cfg.For.Resource(), func(k Key, p queue.Priority) {
			runner.AddWith(k, queue.AddOptions{Priority: p})
		})
		if err != nil {
			return nil, fmt.Errorf("controller %q: %s: %w", cfg.Name, s, err)
		}
		c.synced = append(c.synced, synced)
		c.sources = append(c.sources, s.String())
	}
	m.mu.Lock()
	m.controllers = append(m.controllers, c)
	m.mu.Unlock()
	return c, nil
}

// check refuses a Config without its required fields.
func (cfg Config[P]) check() error {
	if cfg.Name == "" || cfg.For.IsZero() {
		return errors.New("controller: Config needs Name and For")
	}
	if (cfg.Reconcile == nil) == (cfg.ReconcileObject == nil) {
		return fmt.Errorf("controller %q: Config needs exactly one of Reconcile and ReconcileObject, not %s",
			cfg.Name, map[bool]string{true: "none", false: "both"}[cfg.Reconcile == nil])
	}
	return nil
}

// objectReconciler is cfg.ReconcileObject as the Reconciler the gates
// wrap: it reads the key's object from the cache the controller's For
// source fills (CacheIn of the replica's ShardScope in Label mode, where
// the shard gate has moved the object into it before), and skips a key
// whose object is not there.
func objectReconciler[P watch.Object](m *Manager, cfg Config[P]) (Reconciler, error) {
	cache, err := CacheIn(m, cfg.For, m.ShardScope(cfg.ForScope))
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, key Key) (Result, error) {
		obj, ok, err := cache.Get(ctx, key)
		switch {
		case err != nil:
			return Result{}, err
		case !ok:
			LoggerFrom(ctx).Debug("no object in the cache: ReconcileObject not called")
			return Result{}, nil
		}
		return cfg.ReconcileObject(ctx, obj)
	}, nil
}

// Name is the controller's name.
func (c *Controller) Name() string { return c.name }

// Enqueue queues key for reconciling, from outside the controller's
// sources (a timer, another controller).
func (c *Controller) Enqueue(key Key) { c.runner.Add(key) }

// run waits for the controller's informers, then runs its workers until
// ctx ends and their reconciles have drained.
func (c *Controller) run(ctx context.Context) error {
	var wg sync.WaitGroup
	ok := make([]bool, len(c.synced))
	for i, synced := range c.synced {
		wg.Go(func() { ok[i] = synced(ctx) })
	}
	wg.Wait()
	for i := range ok {
		if !ok[i] {
			// ctx ended before the caches synced: no reconcile ever ran.
			c.log.Info("stopped before its caches synced", "source", c.sources[i])
			return nil
		}
	}
	c.log.Info("caches synced; starting workers", "sources", c.sources)
	return c.runner.Run(ctx)
}

// Terminal marks err as final: the key is not retried (it is logged).
// Use it for what retrying cannot fix, such as an invalid spec.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err: err}
}

type terminalError struct{ err error }

func (e *terminalError) Error() string { return "terminal: " + e.err.Error() }
func (e *terminalError) Unwrap() error { return e.err }
