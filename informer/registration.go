package informer

import (
	"context"
	"errors"
)

// HandlerOptions configure one handler.
type HandlerOptions struct {
	// Resync asks for OnUpdate(obj, obj) for every object each
	// Options.ResyncPeriod; ignored when the informer has no resync period.
	Resync bool
}

// Registration is a handler's handle: its sync state, its backlog, and a
// way to remove it.
type Registration interface {
	// HasSynced reports whether the handler has been given every object of
	// the informer's first list (or of the store when it was added).
	HasSynced() bool
	// Backlog is the number of keys with changes not yet delivered. It is
	// bounded by the number of objects: changes to one key coalesce.
	Backlog() int
	// Remove stops deliveries to the handler; pending changes are dropped.
	Remove()
}

type registration[T any] struct {
	inf    interface{ removeHandler(*registration[T]) }
	q      *handlerQueue[T]
	cancel context.CancelFunc // nil until its goroutine starts
	gone   bool               // removed; guarded by the informer's distMu
}

func (r *registration[T]) HasSynced() bool { return r.q.hasSynced() }
func (r *registration[T]) Backlog() int    { return int(r.q.backlog.Load()) }
func (r *registration[T]) Remove()         { r.inf.removeHandler(r) }

// AddHandler registers h. Added before Run, it receives the first list's
// objects with inInitialList set. Added later, it first receives every
// object in the store as an add with inInitialList set, then live changes,
// with neither a gap nor an overlap between the two.
func (inf *Informer[T]) AddHandler(h Handler[T], opts HandlerOptions) (Registration, error) {
	if h == nil {
		return nil, errors.New("informer: nil handler")
	}
	r := &registration[T]{inf: inf, q: newHandlerQueue(h, opts.Resync, inf.opts.Logger)}
	inf.runMu.Lock()
	defer inf.runMu.Unlock()
	inf.distMu.Lock()
	defer inf.distMu.Unlock()
	if inf.synced.Load() {
		for _, obj := range inf.store.List() {
			if key, err := inf.store.Key(obj); err == nil {
				r.q.add(key, obj, true)
			}
		}
		r.q.markSynced()
	}
	inf.handlers = append(inf.handlers, r)
	if inf.runCtx != nil {
		inf.startHandlerLocked(inf.runCtx, r)
	}
	return r, nil
}

// startHandlerLocked starts r's delivery goroutine under Run's WaitGroup.
// Called with runMu and distMu held.
func (inf *Informer[T]) startHandlerLocked(ctx context.Context, r *registration[T]) {
	ctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	inf.wg.Add(1)
	go func() {
		defer inf.wg.Done()
		r.q.run(ctx)
	}()
}

func (inf *Informer[T]) removeHandler(r *registration[T]) {
	inf.distMu.Lock()
	defer inf.distMu.Unlock()
	if r.gone {
		return
	}
	r.gone = true
	if r.cancel != nil {
		r.cancel()
	}
	for i, x := range inf.handlers {
		if x == r {
			inf.handlers = append(inf.handlers[:i], inf.handlers[i+1:]...)
			break
		}
	}
}
