package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// informerRunner runs the manager's informers, one goroutine each: those
// built before Run from its start, and each one built while Run runs at
// once. The manager's caches map is the one registry of its informers;
// this is only their lifecycle, and nobody else runs them (Informer hands
// out a SharedInformer, which cannot). The methods ending in Locked
// expect the Manager's mu held.
type informerRunner struct {
	// ctx is Run's informer context while the informers run; nil before
	// Run and once they are stopped. Guarded by the Manager's mu.
	ctx context.Context
	wg  sync.WaitGroup

	errMu sync.Mutex
	errs  []error // what the informers' Runs returned; guarded by errMu
}

// startLocked runs every informer of caches under ctx.
func (r *informerRunner) startLocked(ctx context.Context, caches map[cacheKey]*cacheEntry) {
	r.ctx = ctx
	for _, e := range caches {
		r.goLocked(e)
	}
}

// addLocked runs a new informer at once when the others run.
func (r *informerRunner) addLocked(e *cacheEntry) {
	if r.ctx != nil {
		r.goLocked(e)
	}
}

func (r *informerRunner) goLocked(e *cacheEntry) {
	ctx := r.ctx
	r.wg.Go(func() {
		if err := e.run(ctx); err != nil {
			r.errMu.Lock()
			r.errs = append(r.errs, fmt.Errorf("controller: informer %s: %w", e.name, err))
			r.errMu.Unlock()
		}
	})
}

// stopLocked starts no informer from now on; the caller cancels the
// context given to startLocked.
func (r *informerRunner) stopLocked() { r.ctx = nil }

// wait waits for every informer started to return, and joins their
// errors.
func (r *informerRunner) wait() error {
	r.wg.Wait()
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return errors.Join(r.errs...)
}

// SharedInformer is one of the manager's shared informers as its users
// see it: its read-only store, its handlers, whether it synced and how it
// is doing. Its lifecycle is the manager's: the manager built it with its
// options and runs it from Run until Run's controllers stopped, so a
// caller can neither run it a second time nor reconfigure it. Get one
// from Informer; it is safe for concurrent use.
type SharedInformer[T watch.Object] struct {
	inf *informer.Informer[T]
}

// Store is the informer's read-only store. Its objects are shared with
// every other reader and must not be changed; a Reader hands out copies.
func (s *SharedInformer[T]) Store() store.View[T] { return s.inf.Store() }

// AddHandler adds a handler of the informer's changes (see
// informer.Informer.AddHandler); Registration.Remove removes it.
func (s *SharedInformer[T]) AddHandler(h informer.Handler[T], opts informer.HandlerOptions) (informer.Registration, error) {
	return s.inf.AddHandler(h, opts)
}

// HasSynced reports whether the informer's first list has been stored.
func (s *SharedInformer[T]) HasSynced() bool { return s.inf.HasSynced() }

// WaitForSync waits until the informer has synced or ctx ends, and
// reports whether it synced.
func (s *SharedInformer[T]) WaitForSync(ctx context.Context) bool { return s.inf.WaitForSync(ctx) }

// Health is the informer's health (see informer.Health).
func (s *SharedInformer[T]) Health() informer.Health { return s.inf.Health() }

// Stats are the informer's counters (see informer.Stats).
func (s *SharedInformer[T]) Stats() informer.Stats { return s.inf.Stats() }

// StoreMode is the store the informer keeps its objects in: compact
// unless its resource needs the typed one (informer.Options.EffectiveStore).
func (s *SharedInformer[T]) StoreMode() informer.StoreMode { return s.inf.StoreMode() }
