package informer

import (
	"context"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// Handler receives an informer's changes. Calls to one handler are
// sequential, in the order the informer saw the changes, on a goroutine of
// the handler's own: a slow handler delays no other handler and never the
// watch. Objects are shared with the store and other handlers: read-only.
type Handler[T any] interface {
	// OnAdd is called for an object the handler has not seen. inInitialList
	// is true for objects of the informer's first list (or, for a handler
	// added later, of the store when it was added).
	OnAdd(obj T, inInitialList bool)
	// OnUpdate is called when an object changes. With a resync period,
	// old and new may be the same object.
	OnUpdate(old, new T)
	// OnDelete is called when an object is deleted. finalStateUnknown is
	// true when the delete was not seen on a watch but inferred from a
	// relist (it happened while disconnected): obj is then the last state
	// the informer knew, not the state at deletion.
	OnDelete(obj T, finalStateUnknown bool)
}

// RelistUpdater is a Handler that tells the updates a relist computed
// from those a watch delivered: for those, the informer calls
// OnRelistUpdate instead of OnUpdate. Such an update may span several
// changes of the object that the informer did not see (it was not
// watching). A printer says so (kwatch --diff); most handlers need not
// care.
type RelistUpdater[T any] interface {
	OnRelistUpdate(old, new T)
}

// HandlerFuncs adapts functions to a Handler; nil functions are skipped.
// RelistUpdateFunc, if set, gets the updates a relist computed (see
// RelistUpdater); if nil, UpdateFunc gets them.
type HandlerFuncs[T any] struct {
	AddFunc          func(obj T, inInitialList bool)
	UpdateFunc       func(old, new T)
	DeleteFunc       func(obj T, finalStateUnknown bool)
	RelistUpdateFunc func(old, new T)
}

// OnRelistUpdate calls RelistUpdateFunc if set, else UpdateFunc.
func (h HandlerFuncs[T]) OnRelistUpdate(old, new T) {
	if h.RelistUpdateFunc != nil {
		h.RelistUpdateFunc(old, new)
		return
	}
	h.OnUpdate(old, new)
}

// OnAdd calls AddFunc if set.
func (h HandlerFuncs[T]) OnAdd(obj T, initial bool) {
	if h.AddFunc != nil {
		h.AddFunc(obj, initial)
	}
}

// OnUpdate calls UpdateFunc if set.
func (h HandlerFuncs[T]) OnUpdate(old, new T) {
	if h.UpdateFunc != nil {
		h.UpdateFunc(old, new)
	}
}

// OnDelete calls DeleteFunc if set.
func (h HandlerFuncs[T]) OnDelete(obj T, unknown bool) {
	if h.DeleteFunc != nil {
		h.DeleteFunc(obj, unknown)
	}
}

// pending is the coalesced work for one key of one handler: the state the
// handler last saw (old) and the newest state (cur). However many changes
// happen while the handler is busy, it gets one call that takes it from
// old to cur.
type pending[T any] struct {
	key     string
	seq     uint64 // order of first arrival; the FIFO entry with this seq is the live one
	old     T
	oldOK   bool // the handler knows the object (old is its view)
	cur     T
	curOK   bool // the object exists; false after a delete (cur is then its final state)
	unknown bool // the delete was inferred from a relist
	initial bool // an add from the initial list
	resync  bool // a resync's OnUpdate(obj, obj), no change merged into it since
	// relisted: a relist computed the update (or one merged into it).
	relisted bool
}

type fifoEntry struct {
	key string
	seq uint64
}

// handlerQueue is one handler's bounded, coalescing delivery queue. Its
// size is bounded by the number of distinct keys with pending work: a key
// added and deleted before the handler saw it leaves nothing behind.
type handlerQueue[T any] struct {
	h      Handler[T]
	resync bool

	mu sync.Mutex
	// items holds the pending work by key; every key in items has exactly
	// one live entry in fifo (the one with its seq).
	items map[string]*pending[T]
	// fifo orders keys by first arrival. Entries whose seq no longer
	// matches items are stale and skipped; compactLocked drops them when
	// they outnumber the live ones.
	fifo    []fifoEntry
	head    int
	nextSeq uint64
	// syncSeq: once synced is set, the handler has synced when every
	// entry up to syncSeq is delivered.
	syncSeq uint64
	synced  bool
	// inFlight is the seq being delivered right now, 0 when idle.
	inFlight uint64

	wake    chan struct{} // capacity 1: a pending wake-up is enough
	backlog atomic.Int64
	panics  atomic.Int64
	// merged counts changes that got no call of their own: folded into a
	// later change of their key, or an add cancelled by its delete.
	merged atomic.Uint64
	log    *slog.Logger

	// filling counts the addAll calls adding their keys, for which they
	// sized items and the FIFO: a drain between batches keeps that
	// storage. Guarded by mu.
	filling int
	// slab holds the pending entries addAll allocated for its current
	// batch, taken by pushLocked; nil outside a batch. Guarded by mu.
	slab []pending[T]
}

func newHandlerQueue[T any](h Handler[T], resync bool, log *slog.Logger) *handlerQueue[T] {
	return &handlerQueue[T]{h: h, resync: resync, log: log, items: map[string]*pending[T]{}, wake: make(chan struct{}, 1)}
}

func (q *handlerQueue[T]) pushLocked(key string) *pending[T] {
	var p *pending[T]
	if n := len(q.slab); n > 0 {
		p, q.slab = &q.slab[0], q.slab[1:]
	} else {
		p = new(pending[T])
	}
	q.nextSeq++
	p.key, p.seq = key, q.nextSeq
	q.items[key] = p
	q.reclaimLocked()
	q.fifo = append(q.fifo, fifoEntry{key: key, seq: p.seq})
	return p
}

// reclaimLocked moves the FIFO's undelivered entries to its front once the
// delivered ones before head are at least half of it (and more than a
// few). A handler that stays a change or two behind never lets the queue
// drain, and without this the delivered prefix would grow with every
// change instead of with the pending keys. Each entry moved is paid for by
// a delivered one, so the cost is O(1) amortized per change.
func (q *handlerQueue[T]) reclaimLocked() {
	if q.head < 64 || 2*q.head < len(q.fifo) {
		return
	}
	n := copy(q.fifo, q.fifo[q.head:])
	clear(q.fifo[n:])
	q.fifo, q.head = q.fifo[:n], 0
}

func (q *handlerQueue[T]) signal() {
	q.backlog.Store(int64(len(q.items)))
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *handlerQueue[T]) add(key string, obj T, initial bool) {
	q.mu.Lock()
	q.addLocked(key, obj, initial)
	q.signal()
	q.mu.Unlock()
}

func (q *handlerQueue[T]) addLocked(key string, obj T, initial bool) {
	p, ok := q.items[key]
	if !ok {
		p = q.pushLocked(key)
		p.initial = initial
	} else {
		q.merged.Add(1)
	}
	p.cur, p.curOK, p.resync = obj, true, false
}

// addAll is add for many keys (a restored or replayed store, a first
// list), objs[i] the object of keys[i]: the lock is taken, and the
// handler woken, once per addBatch keys rather than once per key, and an
// empty queue is sized for them at once.
func (q *handlerQueue[T]) addAll(keys []string, objs []T, initial bool) {
	q.mu.Lock()
	if len(q.items) == 0 && len(q.fifo) == 0 {
		q.items = make(map[string]*pending[T], len(keys))
		q.fifo = slices.Grow(q.fifo, len(keys))
	}
	q.filling++
	q.mu.Unlock()
	defer q.doneFilling()
	inBatches(keys, objs, func(keys []string, objs []T) {
		q.mu.Lock()
		defer q.mu.Unlock()
		// The keys' pending entries, one allocation for the batch: it is
		// kept while any of them waits, at most addBatch entries' worth.
		q.slab = make([]pending[T], len(keys))
		for i, key := range keys {
			q.addLocked(key, objs[i], initial)
		}
		q.slab = nil
		q.signal()
	})
}

// doneFilling ends an addAll: the storage it sized is given back as a
// drain would, if the handler took every key while it was filling (the
// drain then kept it).
func (q *handlerQueue[T]) doneFilling() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.filling--
	if len(q.items) == 0 && q.head == len(q.fifo) {
		q.drainedLocked()
	}
}

// addBatch is how many keys addAll adds under one hold of the queue's
// lock: the handler's goroutine, waiting for the lock, starts on the first
// of them while the informer adds the next.
const addBatch = 512

// inBatches calls batch for each run of up to addBatch keys and their
// objects, in order.
func inBatches[T any](keys []string, objs []T, batch func([]string, []T)) {
	for len(keys) > 0 {
		n := min(len(keys), addBatch)
		batch(keys[:n], objs[:n])
		keys, objs = keys[n:], objs[n:]
	}
}

func (q *handlerQueue[T]) update(key string, old, obj T) { q.updateFrom(key, old, obj, false) }

func (q *handlerQueue[T]) relistUpdate(key string, old, obj T) { q.updateFrom(key, old, obj, true) }

func (q *handlerQueue[T]) updateFrom(key string, old, obj T, relisted bool) {
	q.mu.Lock()
	p, ok := q.items[key]
	if !ok {
		p = q.pushLocked(key)
		p.old, p.oldOK = old, true
	} else {
		q.merged.Add(1)
	}
	p.cur, p.curOK, p.resync = obj, true, false
	p.relisted = p.relisted || relisted
	q.signal()
	q.mu.Unlock()
}

// remove queues a delete. last is the state the store held (what the
// handler has seen or has pending); final is the object as deleted.
func (q *handlerQueue[T]) remove(key string, last, final T, unknown bool) {
	q.mu.Lock()
	p, ok := q.items[key]
	switch {
	case !ok:
		p = q.pushLocked(key)
		// old must be the handler's view, not the final state: if the key
		// is re-created before delivery, the handler gets OnUpdate(old, new)
		// from what it really saw.
		p.old, p.oldOK = last, true
	default:
		q.merged.Add(1)
	case !p.oldOK:
		// Added and deleted before the handler saw it: nothing to say.
		q.merged.Add(2)
		delete(q.items, key)
		*p = pending[T]{} // an addAll slab keeps no object of a cancelled add
		q.compactLocked()
		q.signal()
		q.mu.Unlock()
		return
	}
	p.cur, p.curOK, p.unknown, p.resync = final, false, unknown, false
	q.signal()
	q.mu.Unlock()
}

// resyncObj queues OnUpdate(obj, obj) unless real work is already pending.
func (q *handlerQueue[T]) resyncObj(key string, obj T) {
	q.mu.Lock()
	if _, ok := q.items[key]; !ok {
		p := q.pushLocked(key)
		p.old, p.oldOK, p.cur, p.curOK, p.resync = obj, true, obj, true, true
		q.signal()
	}
	q.mu.Unlock()
}

// markSynced records that the handler is synced once everything queued so
// far is delivered.
func (q *handlerQueue[T]) markSynced() {
	q.mu.Lock()
	q.syncSeq, q.synced = q.nextSeq, true
	q.mu.Unlock()
}

func (q *handlerQueue[T]) hasSynced() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.synced && q.drainedThroughLocked(q.syncSeq)
}

func (q *handlerQueue[T]) drainedThroughLocked(seq uint64) bool {
	if q.inFlight != 0 && q.inFlight <= seq {
		return false
	}
	for i := q.head; i < len(q.fifo); i++ {
		e := q.fifo[i]
		if p, ok := q.items[e.key]; ok && p.seq == e.seq {
			return e.seq > seq
		}
	}
	return true
}

// compactLocked drops stale FIFO entries when they outnumber live ones, so
// the FIFO stays within twice the number of pending keys.
func (q *handlerQueue[T]) compactLocked() {
	if len(q.fifo)-q.head <= 2*len(q.items)+64 {
		return
	}
	live := q.fifo[:0]
	for _, e := range q.fifo[q.head:] {
		if p, ok := q.items[e.key]; ok && p.seq == e.seq {
			live = append(live, e)
		}
	}
	clear(q.fifo[len(live):])
	q.fifo, q.head = live, 0
}

// pop takes the oldest pending work, or returns false when the queue is empty.
func (q *handlerQueue[T]) pop() (pending[T], bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head < len(q.fifo) {
		e := q.fifo[q.head]
		q.fifo[q.head] = fifoEntry{}
		q.head++
		p, ok := q.items[e.key]
		if !ok || p.seq != e.seq {
			continue
		}
		delete(q.items, e.key)
		q.inFlight = p.seq
		if q.head == len(q.fifo) {
			q.drainedLocked()
		}
		q.backlog.Store(int64(len(q.items)))
		taken := *p
		*p = pending[T]{} // an addAll slab keeps no objects it delivered
		return taken, true
	}
	q.drainedLocked()
	return pending[T]{}, false
}

// keptBacklog is the most entries the queue's storage may have grown to
// hold and still be kept once it has drained.
const keptBacklog = 256

// drainedLocked empties the FIFO, whose every entry has been taken (and so
// items is empty too). A burst (the initial list, a relist) that grew the
// FIFO past keptBacklog gives its storage back, the map's with it, which
// neither would by itself: a handler of 100,000 objects would otherwise
// hold its start's peak for good. The next burst grows them again, at O(1)
// amortized cost per key.
func (q *handlerQueue[T]) drainedLocked() {
	if cap(q.fifo) > keptBacklog && len(q.items) == 0 && q.filling == 0 {
		q.fifo, q.head, q.items = nil, 0, map[string]*pending[T]{}
		return
	}
	q.fifo, q.head = q.fifo[:0], 0
}

// run delivers pending work until ctx is done.
func (q *handlerQueue[T]) run(ctx context.Context) {
	for {
		p, ok := q.pop()
		if !ok {
			select {
			case <-q.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		deliver(q.h, p, q.log, &q.panics)
		q.delivered()
	}
}

// delivered marks the call of the last pop done.
func (q *handlerQueue[T]) delivered() {
	q.mu.Lock()
	q.inFlight = 0
	q.mu.Unlock()
}

func (q *handlerQueue[T]) wantsResync() bool { return q.resync }

func (q *handlerQueue[T]) counts() deliveryCounts {
	return deliveryCounts{backlog: q.backlog.Load(), panics: q.panics.Load(), merged: q.merged.Load()}
}

// deliver makes one call of h. A panicking handler is logged and skipped
// (counted in panics): one bad handler must not take the informer and
// every other handler down.
func deliver[T any](h Handler[T], p pending[T], log *slog.Logger, panics *atomic.Int64) {
	defer func() {
		if r := recover(); r != nil {
			panics.Add(1)
			log.Error("informer handler panicked", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	if kc, ok := h.(keyChangeReceiver); ok {
		kc.onKeyChange(p.key, KeyChange{InitialList: p.initial && !p.oldOK && p.curOK, Resync: p.resync})
		return
	}
	if kh, ok := h.(keyReceiver); ok {
		kh.onKey(p.key)
		return
	}
	if cr, ok := h.(changeReceiver[T]); ok {
		cr.onChange(p)
		return
	}
	switch {
	case !p.oldOK && p.curOK:
		h.OnAdd(p.cur, p.initial)
	case p.oldOK && p.curOK:
		if rh, ok := h.(RelistUpdater[T]); ok && p.relisted {
			rh.OnRelistUpdate(p.old, p.cur)
			return
		}
		h.OnUpdate(p.old, p.cur)
	case p.oldOK && !p.curOK:
		h.OnDelete(p.cur, p.unknown)
	}
}

// KeyHandler returns a Handler that passes the store key of every added,
// updated or deleted object to enqueue: the usual way to feed a workqueue,
// whose workers then read the object from the informer's Store by that
// key. The key is the one the store uses (Options.Key, "namespace/name" by
// default), so a Get with it finds the object.
func KeyHandler[T watch.Object](enqueue func(key string)) Handler[T] {
	return keyHandler[T](enqueue)
}

// keyReceiver is a handler that wants only the store key of each change.
type keyReceiver interface{ onKey(key string) }

// withoutOld adapts h to HandlerOptions.NoOld in a typed store: its
// updates come with the zero T as old. A handler given keys is left as it
// is.
func withoutOld[T any](h Handler[T]) Handler[T] {
	switch h.(type) {
	case keyReceiver, keyChangeReceiver, changeReceiver[T]:
		return h
	}
	return noOldHandler[T]{h}
}

// noOldHandler is withoutOld's Handler.
type noOldHandler[T any] struct{ h Handler[T] }

func (n noOldHandler[T]) OnAdd(obj T, initial bool)    { n.h.OnAdd(obj, initial) }
func (n noOldHandler[T]) OnDelete(obj T, unknown bool) { n.h.OnDelete(obj, unknown) }

func (n noOldHandler[T]) OnUpdate(_, obj T) {
	var zero T
	n.h.OnUpdate(zero, obj)
}

// OnRelistUpdate keeps what h tells apart: RelistUpdater's call if it is
// one, else OnUpdate.
func (n noOldHandler[T]) OnRelistUpdate(_, obj T) {
	var zero T
	if rh, ok := n.h.(RelistUpdater[T]); ok {
		rh.OnRelistUpdate(zero, obj)
		return
	}
	n.h.OnUpdate(zero, obj)
}

// changeReceiver is a handler that wants the whole change: its key, and
// for a delete the version the handler last saw beside the final state
// (the compact store's decodingHandler, which needs it when the final
// state does not decode).
type changeReceiver[T any] interface{ onChange(p pending[T]) }

// keyHandler is KeyHandler's Handler. The informer delivers keys to it
// through onKey; its On* methods serve callers that use it directly, and
// can only compute the default key.
type keyHandler[T watch.Object] func(key string)

func (h keyHandler[T]) onKey(key string) { h(key) }

func (h keyHandler[T]) OnAdd(obj T, _ bool)    { h.metaKey(obj) }
func (h keyHandler[T]) OnUpdate(_, obj T)      { h.metaKey(obj) }
func (h keyHandler[T]) OnDelete(obj T, _ bool) { h.metaKey(obj) }

func (h keyHandler[T]) metaKey(obj T) {
	if k, err := store.MetaKey(obj); err == nil {
		h(k)
	}
}
