package informer

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
)

// DefaultOrderedBuffer is an Ordered handler's queue bound when
// HandlerOptions.Buffer is zero, in changes. Each change held keeps the
// version of the object it carries alive, so the bound is also one on
// memory: 65,536 changes of 1 KiB objects (a Table row of a pod) hold at
// most about 64 MiB beyond the cache. A terminal paused for a minute
// behind a server making 1,000 changes a second stays within it.
const DefaultOrderedBuffer = 65536

// Delivery chooses how a handler's changes wait for it.
type Delivery int

const (
	// Coalesce (the default) keeps at most one pending change per key: a
	// slow handler gets one call that takes it from the state it last saw
	// to the newest, however many changes came between. Its backlog is
	// bounded by the number of objects. What controllers want: they
	// reconcile to the newest state.
	Coalesce Delivery = iota
	// Ordered gives the handler one call per change the informer applied,
	// in the order it applied them: every watch event, and after a relist
	// the computed difference (adds, updates, deletes with
	// finalStateUnknown). What a printer or an audit log wants. The queue
	// holds at most HandlerOptions.Buffer changes; when it is full, the
	// overflow policy is OverflowCoalesce.
	Ordered
)

// OverflowCoalesce is what an Ordered handler's full queue does, and the
// only policy: later changes are coalesced per key, as a Coalesce
// handler's are, until the handler has caught up with every one of them;
// then delivery is ordered again. The handler never blocks the informer,
// every change it is given is still in order per key and after everything
// queued before the overflow, and applying its calls still ends in the
// store's state; the changes merged away are counted in
// Registration.Merged, so a consumer can say how many it missed.
const OverflowCoalesce = "coalesce"

// deliveryCounts are a delivery queue's gauges and counters.
type deliveryCounts struct {
	backlog, panics int64
	merged          uint64
}

// delivery is a handler's queue between the informer, which pushes
// changes with its distribution lock held (so a push never blocks), and
// the handler's goroutine (run).
type delivery[T any] interface {
	add(key string, obj T, initial bool)
	addAll(keys []string, objs []T, initial bool) // add of each keys[i], objs[i]
	update(key string, old, obj T)
	relistUpdate(key string, old, obj T) // an update a relist computed
	remove(key string, last, final T, unknown bool)
	resyncObj(key string, obj T)
	markSynced()
	hasSynced() bool
	wantsResync() bool
	counts() deliveryCounts
	run(ctx context.Context)
}

// orderedQueue is an Ordered handler's queue: a FIFO of changes, bounded
// by limit, and behind it a coalescing queue for the changes that came
// while the FIFO was full. Everything in over arrived after everything in
// buf: once over holds a change, new changes go to over until it is empty.
type orderedQueue[T any] struct {
	h      Handler[T]
	resync bool
	limit  int

	mu sync.Mutex
	// buf[head:] are the changes not yet delivered, oldest first, each
	// with its seq; buf[:head] are cleared slots.
	buf  []pending[T]
	head int
	// nextSeq numbers changes put in buf.
	nextSeq uint64
	// syncSeq: once synced is set, the handler has synced when every
	// change of buf up to syncSeq is delivered and over has synced.
	syncSeq uint64
	synced  bool
	// inFlight is the seq of the buf change being delivered, 0 otherwise.
	inFlight uint64

	// over coalesces the overflow; it has its own lock, taken after mu.
	// Its goroutine is never started: run pops from it. Every call that
	// changes over.items is made with mu held, so reading len(over.items)
	// needs mu only (overLenLocked).
	over *handlerQueue[T]

	wake    chan struct{} // capacity 1: a pending wake-up is enough
	backlog atomic.Int64
	panics  atomic.Int64
	log     *slog.Logger
}

func newOrderedQueue[T any](h Handler[T], resync bool, limit int, log *slog.Logger) *orderedQueue[T] {
	if limit <= 0 {
		limit = DefaultOrderedBuffer
	}
	return &orderedQueue[T]{h: h, resync: resync, limit: limit, log: log,
		over: newHandlerQueue(h, false, log), wake: make(chan struct{}, 1)}
}

// pushLocked appends p to buf if there is room and no overflow is pending,
// and reports whether it did. mu is held.
func (q *orderedQueue[T]) pushLocked(p pending[T]) bool {
	if q.overflowingLocked() || len(q.buf)-q.head >= q.limit {
		return false
	}
	q.nextSeq++
	p.seq = q.nextSeq
	q.buf = append(q.buf, p)
	return true
}

// overflowingLocked: over holds changes, so new ones must queue behind them.
func (q *orderedQueue[T]) overflowingLocked() bool { return q.overLenLocked() > 0 }

// overLenLocked is the number of keys over holds. mu is held, which is
// enough: over.items changes only under mu (see over).
func (q *orderedQueue[T]) overLenLocked() int { return len(q.over.items) }

func (q *orderedQueue[T]) signalLocked() {
	q.backlog.Store(int64(len(q.buf) - q.head + q.overLenLocked()))
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *orderedQueue[T]) add(key string, obj T, initial bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.pushLocked(pending[T]{key: key, cur: obj, curOK: true, initial: initial}) {
		q.over.add(key, obj, initial)
	}
	q.signalLocked()
}

// addAll is add for many keys, under one hold of the lock per addBatch.
func (q *orderedQueue[T]) addAll(keys []string, objs []T, initial bool) {
	inBatches(keys, objs, func(keys []string, objs []T) {
		q.mu.Lock()
		defer q.mu.Unlock()
		for i, key := range keys {
			if !q.pushLocked(pending[T]{key: key, cur: objs[i], curOK: true, initial: initial}) {
				q.over.add(key, objs[i], initial)
			}
		}
		q.signalLocked()
	})
}

func (q *orderedQueue[T]) update(key string, old, obj T) { q.updateFrom(key, old, obj, false) }

func (q *orderedQueue[T]) relistUpdate(key string, old, obj T) { q.updateFrom(key, old, obj, true) }

func (q *orderedQueue[T]) updateFrom(key string, old, obj T, relisted bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.pushLocked(pending[T]{key: key, old: old, oldOK: true, cur: obj, curOK: true, relisted: relisted}) {
		q.over.updateFrom(key, old, obj, relisted)
	}
	q.signalLocked()
}

func (q *orderedQueue[T]) remove(key string, last, final T, unknown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.pushLocked(pending[T]{key: key, old: last, oldOK: true, cur: final, unknown: unknown}) {
		q.over.remove(key, last, final, unknown)
	}
	q.signalLocked()
}

// resyncObj queues OnUpdate(obj, obj) unless the queue is overflowing: a
// resync is no change, and is skipped rather than merged.
func (q *orderedQueue[T]) resyncObj(key string, obj T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pushLocked(pending[T]{key: key, old: obj, oldOK: true, cur: obj, curOK: true, resync: true}) {
		q.signalLocked()
	}
}

func (q *orderedQueue[T]) markSynced() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.syncSeq, q.synced = q.nextSeq, true
	q.over.markSynced()
}

func (q *orderedQueue[T]) hasSynced() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.synced || (q.inFlight != 0 && q.inFlight <= q.syncSeq) {
		return false
	}
	if q.head < len(q.buf) && q.buf[q.head].seq <= q.syncSeq {
		return false
	}
	return q.over.hasSynced()
}

func (q *orderedQueue[T]) wantsResync() bool { return q.resync }

func (q *orderedQueue[T]) counts() deliveryCounts {
	return deliveryCounts{backlog: q.backlog.Load(), panics: q.panics.Load() + q.over.panics.Load(),
		merged: q.over.merged.Load()}
}

// pop takes the oldest change: from buf, else from over. fromOver says
// which, for delivered.
func (q *orderedQueue[T]) pop() (p pending[T], fromOver, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head < len(q.buf) {
		p = q.buf[q.head]
		q.buf[q.head] = pending[T]{}
		q.head++
		if q.head == len(q.buf) {
			q.buf, q.head = q.buf[:0], 0
		} else if q.head > len(q.buf)/2 && q.head > 1024 {
			// Slide the live changes down so buf does not grow past
			// about twice the limit.
			n := copy(q.buf, q.buf[q.head:])
			clear(q.buf[n:])
			q.buf, q.head = q.buf[:n], 0
		}
		q.inFlight = p.seq
		q.signalLocked()
		return p, false, true
	}
	p, ok = q.over.pop()
	if ok {
		q.signalLocked()
	}
	return p, true, ok
}

func (q *orderedQueue[T]) delivered(fromOver bool) {
	if fromOver {
		q.over.delivered()
		return
	}
	q.mu.Lock()
	q.inFlight = 0
	q.mu.Unlock()
}

// run delivers changes until ctx is done.
func (q *orderedQueue[T]) run(ctx context.Context) {
	for {
		p, fromOver, ok := q.pop()
		if !ok {
			select {
			case <-q.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		deliver(q.h, p, q.log, &q.panics)
		q.delivered(fromOver)
	}
}
