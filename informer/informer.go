package informer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwatch/kwatch/internal/backoff"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// ErrAlreadyRunning is returned by a second concurrent Run.
var ErrAlreadyRunning = errors.New("informer: Run called while already running")

// Informer keeps a local, indexed copy of one resource (in one namespace,
// with one set of selectors) from a list and a resumed watch, and calls
// handlers for every change. Build it with New, add handlers, then call
// Run. Its methods are safe for concurrent use.
type Informer[T watch.Object] struct {
	opts  Options[T]
	store *store.Store[T]

	// distMu makes "write the store, queue the notifications" atomic with
	// respect to adding a handler, so a late handler's replay of the store
	// and the live notifications neither overlap nor leave a gap.
	distMu   sync.Mutex
	handlers []*registration[T] // guarded by distMu
	// filled: the store holds a list or a restored snapshot its handlers
	// were given, so a handler added now is given the store first (even
	// before the informer is synced: a restore's confirmation is in
	// flight). Guarded by distMu.
	filled bool

	running atomic.Bool
	synced  atomic.Bool
	syncCh  chan struct{} // closed once synced
	// runCtx and wg let AddHandler start a late handler's goroutine under
	// Run's ownership: Run waits for it before returning.
	runMu  sync.Mutex
	runCtx context.Context // nil when not running; guarded by runMu
	wg     sync.WaitGroup

	stats stats
	held  heldLogs // what is logged with distMu held, until its release

	// replaced, if set, is told (with distMu held) of each stored version
	// the store gives up: old replaced by cur, or removed (gone). It is the
	// compact side's hook that keeps its decode cache to stored versions.
	replaced func(old, cur T, gone bool)

	// snap keeps the snapshot file of a compact store's Raw informer.
	snap *snapshotter

	// compact, in StoreCompact, does all the work: the fields above are
	// unused and every exported method defers to it.
	compact *compactSide[T]
}

// New returns an informer. It checks opts and starts nothing: call Run.
func New[T watch.Object](opts Options[T]) (*Informer[T], error) {
	if opts.Client == nil {
		return nil, errors.New("informer: Options.Client is nil")
	}
	if opts.Resource.Resource == "" || opts.Resource.Version == "" {
		return nil, errors.New("informer: Options.Resource needs at least Version and Resource")
	}
	if !opts.Form.Valid() {
		return nil, fmt.Errorf("informer: Options.Form %v is not one of watch's Form constants", opts.Form)
	}
	opts.defaults()
	if opts.Store == StoreCompact {
		c, err := newCompact(opts)
		if err != nil {
			return nil, err
		}
		return &Informer[T]{opts: opts, compact: c}, nil
	}
	if opts.Store != StoreTyped {
		return nil, fmt.Errorf("informer: unknown Options.Store %d", opts.Store)
	}
	if len(opts.RawIndexers) > 0 {
		return nil, errors.New("informer: RawIndexers need the compact store (Store: StoreCompact, or StoreDefault without Transform or a Table Form)")
	}
	if opts.Snapshot != nil {
		return nil, errors.New("informer: Snapshot needs the compact store (Store: StoreCompact, or StoreDefault without Transform or a Table Form)")
	}
	if opts.DropManagedFields {
		t, err := dropManagedFields(opts.Transform)
		if err != nil {
			return nil, err
		}
		opts.Transform = t
	}
	return &Informer[T]{
		opts:   opts,
		store:  store.New(store.Options[T]{Key: opts.Key, Indexers: opts.Indexers}),
		syncCh: make(chan struct{}),
	}, nil
}

// Store is the read-only side of the informer's cache: only the informer
// writes to it, so it stays the server's state. Readers may use it at any
// time; objects it returns are shared and must not be modified.
func (inf *Informer[T]) Store() store.View[T] {
	if inf.compact != nil {
		return store.NewView[T](compactView[T]{c: inf.compact, raw: inf.compact.raw.Store()})
	}
	return inf.store.View()
}

// StoreMode is how the informer's store keeps objects: StoreCompact or
// StoreTyped (Options.EffectiveStore), never StoreDefault.
func (inf *Informer[T]) StoreMode() StoreMode { return inf.opts.Store }

// HasSynced reports whether the first list has been committed to the store.
func (inf *Informer[T]) HasSynced() bool {
	if inf.compact != nil {
		return inf.compact.raw.HasSynced()
	}
	return inf.synced.Load()
}

// WaitForSync blocks until the informer has synced or ctx is done, and
// reports whether it synced.
func (inf *Informer[T]) WaitForSync(ctx context.Context) bool {
	if inf.compact != nil {
		return inf.compact.raw.WaitForSync(ctx)
	}
	select {
	case <-inf.syncCh:
		return true
	case <-ctx.Done():
		return inf.HasSynced()
	}
}

// Run lists and watches until ctx is done, then waits for every goroutine
// it started (handler deliveries, resync) and returns nil. It recovers from
// every server or network failure by itself; failures are visible in
// Health and Stats and in the logs.
func (inf *Informer[T]) Run(ctx context.Context) error {
	if inf.compact != nil {
		return inf.compact.run(ctx)
	}
	if !inf.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer inf.running.Store(false)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	inf.runMu.Lock()
	inf.runCtx = ctx
	inf.distMu.Lock()
	for _, r := range inf.handlers {
		inf.startHandlerLocked(ctx, r)
	}
	inf.distMu.Unlock()
	inf.runMu.Unlock()

	if inf.opts.ResyncPeriod > 0 {
		inf.wg.Add(1)
		go func() {
			defer inf.wg.Done()
			inf.resyncLoop(ctx)
		}()
	}

	st := initialState(inf.opts.ListMode)
	if inf.snap != nil {
		// A store that an earlier Run filled is at least as recent as the
		// snapshot that Run wrote, and its handlers have been given it: it
		// is relisted and compared, never restored over.
		if restored, ok := inf.restoreIfEmpty(ctx); ok {
			st = restored
			inf.stats.restored.Store(true)
		}
		inf.wg.Add(1)
		go func() {
			defer inf.wg.Done()
			inf.snap.run(ctx)
		}()
	}

	inf.loop(ctx, st)

	cancel()
	inf.runMu.Lock()
	inf.runCtx = nil
	inf.runMu.Unlock()
	inf.wg.Wait()
	if inf.snap != nil {
		inf.snap.final()
	}
	return nil
}

// restoreIfEmpty restores the snapshot unless an earlier Run filled the
// store.
func (inf *Informer[T]) restoreIfEmpty(ctx context.Context) (state, bool) {
	inf.distMu.Lock()
	filled := inf.filled
	inf.distMu.Unlock()
	if filled {
		return state{}, false
	}
	return inf.snap.restore(ctx)
}

// loop runs the protocol's state machine until ctx is done.
func (inf *Informer[T]) loop(ctx context.Context, st state) {
	bo := backoff.New(inf.opts.Backoff.internal())
	for ctx.Err() == nil {
		out := inf.step(ctx, st)
		if ctx.Err() != nil {
			return
		}
		st = out.st
		if st.synced && !inf.synced.Load() {
			inf.markSynced() // a restored store the confirmation found current
		}
		if out.progress {
			// A committed list or a stream that delivered events proves the
			// server works: the next failure starts from the first step.
			bo.Reset()
		}
		inf.stats.recordErr(out.err)
		delay := inf.delay(bo, out.retry, out.err)
		if out.err != nil {
			inf.opts.Logger.Debug("informer phase ended", "resource", inf.opts.Resource.String(),
				"next", st.phase.String(), "rv", st.rv, "retryIn", delay, "err", out.err)
		}
		if delay > 0 && !sleepCtx(ctx, delay) {
			return
		}
	}
}

// outcome is what one phase did: the next state, how soon to start it,
// the error that ended the phase (nil or io.EOF for a clean end), and
// whether it made progress.
type outcome struct {
	st       state
	retry    retry
	err      error
	progress bool
}

// step runs one phase and applies the RV policy to its outcome.
func (inf *Informer[T]) step(ctx context.Context, st state) outcome {
	defer inf.logHeld() // a list that failed may have refused objects
	switch st.phase {
	case phaseList:
		// A committed list alone does not reset the backoff: a server whose
		// watches all fail at once would otherwise be relisted in a loop.
		rv, continuing, err := inf.list(ctx, st)
		next, r := afterList(st, err, rv, continuing)
		return outcome{st: next, retry: r, err: err}
	case phaseStreamList:
		next, end, committed := inf.streamList(ctx, st)
		if committed {
			next, r := afterWatch(next, end)
			return outcome{st: next, retry: r, err: end.err, progress: end.worked()}
		}
		next, r := afterStreamList(next, end)
		return outcome{st: next, retry: r, err: end.err}
	case phaseConfirm:
		serverRV, err := inf.confirm(ctx, st)
		next, r := afterConfirm(st, err, serverRV)
		return outcome{st: next, retry: r, err: err}
	default:
		next, end := inf.watch(ctx, st)
		next, r := afterWatch(next, end)
		return outcome{st: next, retry: r, err: end.err, progress: end.worked()}
	}
}

func (inf *Informer[T]) delay(bo *backoff.Backoff, r retry, err error) time.Duration {
	switch r {
	case retryJitter:
		// Up to one initial backoff step, at random.
		return time.Duration(rand.Int64N(int64(inf.initialBackoff())))
	case retryBackoff:
		d := bo.FailureAt(time.Now())
		if ra, ok := kube.RetryAfter(err); ok {
			d = backoff.Jittered(ra, 0.2)
		}
		return d
	}
	return 0
}

func (inf *Informer[T]) initialBackoff() time.Duration {
	if d := inf.opts.Backoff.Initial; d > 0 {
		return d
	}
	return backoff.DefaultInitial
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// markSynced is markSyncedLocked for a caller without distMu.
func (inf *Informer[T]) markSynced() {
	inf.distMu.Lock()
	defer inf.distMu.Unlock()
	inf.markSyncedLocked()
}

// markSyncedLocked is called after the first commit, with distMu held.
func (inf *Informer[T]) markSyncedLocked() {
	if inf.synced.Load() {
		return
	}
	for _, r := range inf.handlers {
		r.q.markSynced()
	}
	inf.synced.Store(true)
	close(inf.syncCh)
}

func (inf *Informer[T]) resyncLoop(ctx context.Context) {
	t := time.NewTicker(inf.opts.ResyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		inf.resync()
	}
}

// resync queues a resync of every stored object for each handler that
// asked for resyncs (HandlerOptions.Resync).
func (inf *Informer[T]) resync() {
	inf.distMu.Lock()
	for _, r := range inf.handlers {
		if !r.q.wantsResync() {
			continue
		}
		for _, obj := range inf.store.List() {
			if key, err := inf.store.Key(obj); err == nil {
				r.q.resyncObj(key, obj)
			}
		}
	}
	inf.distMu.Unlock()
	inf.logHeld()
}
