package queue

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwatch/kwatch/metrics"
)

// DefaultDrainTimeout is how long Runner.Run lets in-flight reconciles
// finish, with their context still live, after its own context ends.
const DefaultDrainTimeout = 30 * time.Second

// Result tells the runner what to do with a key its reconciler handled
// without error.
type Result struct {
	// RequeueAfter, when positive, processes the key again after this
	// delay. The key's rate-limit history is forgotten first. It wins over
	// Requeue.
	RequeueAfter time.Duration
	// Requeue processes the key again after a rate-limited wait.
	Requeue bool
}

// RunnerOptions configures NewRunner. Only Reconcile is required.
type RunnerOptions[K comparable] struct {
	// Reconcile brings the world in line with key. An error retries the key
	// with a rate-limited wait (its Result is then ignored); a panic is
	// recovered, logged and retried the same way. ctx ends when the drain
	// timeout passes after Run's context ends.
	Reconcile func(ctx context.Context, key K) (Result, error)
	// Workers is the number of keys reconciled at once. Zero means 1;
	// negative is an error.
	Workers int
	// Queue configures the runner's queue: its name, clock, metrics and
	// rate limiter. The zero value is the zero RateLimitedOptions. The
	// runner's kwatch_reconcile_* metrics go to Queue.Metrics too.
	Queue RateLimitedOptions[K]
	// DrainTimeout bounds how long Run waits, after its context ends, for
	// in-flight reconciles before cancelling their context. Zero means
	// DefaultDrainTimeout; negative is an error.
	DrainTimeout time.Duration
	// Logger receives reconcile errors and recovered panics. Nil means
	// slog.Default().
	Logger *slog.Logger
}

// Runner feeds the keys of a rate-limited queue to a reconcile function on
// a fixed number of workers, retrying failures with backoff.
//
// Add may be called from any goroutine at any time, before or while Run
// runs; keys added before Run wait for it. That makes Add the only thing an
// event handler needs to call. A Runner runs once: after Run returns its
// queue is shut down and further adds are ignored.
//
// The zero value is not usable; create a Runner with NewRunner.
type Runner[K comparable] struct {
	reconcile func(context.Context, K) (Result, error)
	workers   int
	drain     time.Duration
	log       *slog.Logger
	clock     Clock
	q         *RateLimitedQueue[K]
	started   atomic.Bool

	results map[string]metrics.Counter // kwatch_reconcile_total by result label
	panics  metrics.Counter
}

// The result labels of kwatch_reconcile_total.
const (
	resultSuccess = "success"
	resultError   = "error"
	resultRequeue = "requeue"
	resultPanic   = "panic"
)

// NewRunner returns a runner, or an *OptionError when an option is
// invalid. It starts no goroutine; Run does.
func NewRunner[K comparable](opts RunnerOptions[K]) (*Runner[K], error) {
	if opts.Reconcile == nil {
		return nil, optionErrorf("RunnerOptions.Reconcile", "is required")
	}
	if opts.Workers < 0 {
		return nil, optionErrorf("RunnerOptions.Workers", "must be >= 0, got %d", opts.Workers)
	}
	if opts.Queue.MaxLowWait < 0 {
		return nil, optionErrorf("RunnerOptions.Queue.MaxLowWait", "must be >= 0, got %v", opts.Queue.MaxLowWait)
	}
	if opts.DrainTimeout < 0 {
		return nil, optionErrorf("RunnerOptions.DrainTimeout", "must be >= 0, got %v", opts.DrainTimeout)
	}
	r := &Runner[K]{
		reconcile: opts.Reconcile,
		workers:   max(1, opts.Workers),
		drain:     opts.DrainTimeout,
		log:       opts.Logger,
		clock:     clockOrReal(opts.Queue.Clock),
		q:         NewRateLimited(opts.Queue),
	}
	if r.drain == 0 {
		r.drain = DefaultDrainTimeout
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	provider, _ := metrics.OrNoop(opts.Queue.Metrics)
	name := metrics.Label{Name: "name", Value: r.q.Name()}
	r.results = make(map[string]metrics.Counter, 4)
	for _, res := range []string{resultSuccess, resultError, resultRequeue, resultPanic} {
		r.results[res] = provider.Counter(MetricReconcile, "Total number of reconciles by result.", name, metrics.Label{Name: "result", Value: res})
	}
	r.panics = provider.Counter(MetricReconcilePanics, "Total number of reconciles that panicked.", name)
	return r, nil
}

// Add queues key for reconciling at normal priority. It is safe from any
// goroutine, before and during Run; after Run has returned it does
// nothing.
func (r *Runner[K]) Add(key K) { r.q.Add(key) }

// AddWith queues key as opts says: PriorityLow for a key that only
// confirms known state (an initial list, a resync), so that changes go
// first. The key keeps that priority across its retries and requeues.
func (r *Runner[K]) AddWith(key K, opts AddOptions) { r.q.AddWith(key, opts) }

// AddAfter queues key for reconciling once d has elapsed.
func (r *Runner[K]) AddAfter(key K, d time.Duration) { r.q.AddAfter(key, d) }

// Queue returns the runner's queue, for its length or its rate limiter.
func (r *Runner[K]) Queue() *RateLimitedQueue[K] { return r.q }

// Run starts the workers and blocks until ctx ends (or until the queue is
// shut down through Queue, when it returns nil once the workers exit). Then it shuts the
// queue down (keys not yet handed out are dropped), lets in-flight
// reconciles finish for up to the drain timeout, cancels their context if
// they have not, and returns once every worker has exited. It returns nil
// after a clean drain, an error wrapping ErrDrainTimeout when reconciles
// had to be cancelled, or ErrAlreadyStarted when called a second time.
func (r *Runner[K]) Run(ctx context.Context) error {
	if !r.started.CompareAndSwap(false, true) {
		return ErrAlreadyStarted
	}
	// Reconciles get their own context: it survives ctx by the drain
	// timeout, so that in-flight work can finish cleanly.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	var wg sync.WaitGroup
	for range r.workers {
		wg.Go(func() { r.work(ctx, workCtx) })
	}
	workersDone := make(chan struct{})
	go func() { wg.Wait(); close(workersDone) }()
	select {
	case <-ctx.Done():
	case <-workersDone: // the queue was shut down through Queue()
		return nil
	}

	drainCtx, cancelDrain := context.WithCancelCause(context.Background())
	timer := r.clock.AfterFunc(r.drain, func() {
		cancelDrain(fmt.Errorf("%w (%v)", ErrDrainTimeout, r.drain))
	})
	err := r.q.ShutDownWithDrain(drainCtx)
	timer.Stop()
	cancelDrain(nil)
	if err != nil {
		cancelWork()
	}
	<-workersDone
	return err
}

// work is one worker: it reconciles keys until the queue is shut down.
// Once stop has ended it hands back the keys it still gets unprocessed.
func (r *Runner[K]) work(stop, workCtx context.Context) {
	for {
		key, prio, shutdown := r.q.GetWithPriority()
		if shutdown {
			return
		}
		if stop.Err() != nil {
			r.q.Done(key) // stopping: keys not yet started are dropped
			continue
		}
		r.handle(workCtx, key, prio)
		r.q.Done(key)
	}
}

// handle reconciles key once and schedules what follows: a retry after an
// error or panic, a requeue, or forgetting its backoff after success.
// Retries and requeues keep prio, the priority key was handed out at
// (controller-runtime's #3157: there a retried initial-list key jumped
// ahead of changes).
func (r *Runner[K]) handle(ctx context.Context, key K, prio Priority) {
	res, panicked, err := r.call(ctx, key)
	again := AddOptions{Priority: prio}
	switch {
	case panicked:
		r.results[resultPanic].Inc()
		r.panics.Inc()
		r.q.AddRateLimitedWith(key, again)
	case err != nil:
		r.results[resultError].Inc()
		r.log.Error("reconcile failed", "queue", r.q.Name(), "key", key, "error", err)
		r.q.AddRateLimitedWith(key, again)
	case res.RequeueAfter > 0:
		r.results[resultRequeue].Inc()
		r.q.Forget(key)
		again.After = res.RequeueAfter
		r.q.AddWith(key, again)
	case res.Requeue:
		r.results[resultRequeue].Inc()
		r.q.AddRateLimitedWith(key, again)
	default:
		r.results[resultSuccess].Inc()
		r.q.Forget(key)
	}
}

// call runs the reconciler, turning a panic into panicked=true after
// logging it with the key and the stack.
func (r *Runner[K]) call(ctx context.Context, key K) (res Result, panicked bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			panicked = true
			r.log.Error("reconcile panicked", "queue", r.q.Name(), "key", key,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
		}
	}()
	res, err = r.reconcile(ctx, key)
	return res, false, err
}
