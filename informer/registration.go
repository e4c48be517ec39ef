package informer

import (
	"context"
	"errors"
	"fmt"
)

// HandlerOptions configure one handler.
type HandlerOptions struct {
	// Resync asks for OnUpdate(obj, obj) for every object each
	// Options.ResyncPeriod; ignored when the informer has no resync period.
	Resync bool
	// Delivery is Coalesce (the default) or Ordered: one pending change
	// per key, or every change in order.
	Delivery Delivery
	// Buffer bounds an Ordered handler's queue, in changes;
	// DefaultOrderedBuffer. Past it, changes coalesce (OverflowCoalesce).
	// Ignored for Coalesce, whose queue holds at most one change per key.
	Buffer int
	// NoOld says the handler does not read an update's old object:
	// OnUpdate and OnRelistUpdate get T's zero value as old, a resync's
	// too, in either store. In a compact store (the default) the old
	// version is then not decoded, which is about half the decoding a
	// handler of updates costs there. Deletes are as without it. A
	// KeyHandler or KeyChangeHandler gets no objects and needs no NoOld.
	NoOld bool
}

// Registration is a handler's handle: its sync state, its backlog, and a
// way to remove it.
type Registration interface {
	// HasSynced reports whether the handler has been given every object of
	// the informer's first list (or of the store when it was added).
	HasSynced() bool
	// Backlog is the number of changes not yet delivered: keys with a
	// pending change for Coalesce (bounded by the number of objects),
	// changes for Ordered (bounded by its Buffer plus the number of
	// objects).
	Backlog() int
	// Merged counts the changes the handler got no call of its own for:
	// folded into a later change of the same key, or an add cancelled by
	// its delete before delivery. For Coalesce this is how far a slow
	// handler fell behind; for Ordered it stays 0 unless its buffer
	// overflowed.
	Merged() uint64
	// Remove stops deliveries to the handler; pending changes are dropped.
	Remove()
}

type registration[T any] struct {
	inf    interface{ removeHandler(*registration[T]) }
	q      delivery[T]
	cancel context.CancelFunc // nil until its goroutine starts
	gone   bool               // removed; guarded by the informer's distMu
}

func (r *registration[T]) HasSynced() bool { return r.q.hasSynced() }
func (r *registration[T]) Backlog() int    { return int(r.q.counts().backlog) }
func (r *registration[T]) Merged() uint64  { return r.q.counts().merged }
func (r *registration[T]) Remove()         { r.inf.removeHandler(r) }

// AddHandler registers h. Added before Run, it receives the first list's
// objects with inInitialList set. Added later, it first receives every
// object in the store as an add with inInitialList set, then live changes,
// with neither a gap nor an overlap between the two.
func (inf *Informer[T]) AddHandler(h Handler[T], opts HandlerOptions) (Registration, error) {
	if h == nil {
		return nil, errors.New("informer: nil handler")
	}
	if inf.compact != nil {
		// The decoding handler gives no old object itself: the Raw
		// informer's handler is not asked to.
		raw := opts
		raw.NoOld = false
		return inf.compact.raw.AddHandler(inf.compact.handler(h, opts), raw)
	}
	if opts.NoOld {
		h = withoutOld(h)
	}
	r := &registration[T]{inf: inf}
	switch opts.Delivery {
	case Coalesce:
		r.q = newHandlerQueue(h, opts.Resync, inf.opts.Logger)
	case Ordered:
		r.q = newOrderedQueue(h, opts.Resync, opts.Buffer, inf.opts.Logger)
	default:
		return nil, fmt.Errorf("informer: unknown HandlerOptions.Delivery %d", opts.Delivery)
	}
	inf.runMu.Lock()
	defer inf.runMu.Unlock()
	inf.distMu.Lock()
	defer inf.distMu.Unlock()
	if inf.filled {
		keys, objs := inf.store.Items()
		r.q.addAll(keys, objs, true)
	}
	if inf.synced.Load() {
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
