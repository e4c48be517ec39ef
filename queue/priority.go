package queue

import "time"

// Priorities.
//
// A queue has two lanes of ready keys. Normal-priority keys (Add, the
// zero AddOptions) wait in the ticket ring of queue.go; low-priority keys
// (an informer's initial list, a resync) wait in the low lane below. Get
// serves the normal lane first, except that a low-priority key that has
// waited MaxLowWait is served before every normal one: aging, so that no
// stream of normal keys, however fast, can keep a low key waiting for
// longer than that (controller-runtime's priority queue has no such bound;
// its initial-list keys were seen to wait for half an hour).
//
// The low lane is a FIFO with lazy deletion: a low key re-added at normal
// priority moves to the normal ring at once and leaves a stale entry behind,
// which Get skips and compactLocked drops once stale entries outnumber the
// live ones, so the lane stays within about twice the number of low keys.

// Priority orders the keys ready for Get. The zero value is PriorityNormal.
type Priority int8

const (
	// PriorityLow is for keys that only confirm what is already known:
	// an informer's initial list and its resyncs.
	PriorityLow Priority = -1
	// PriorityNormal is for keys whose object changed. It is the zero
	// value, and what Add uses.
	PriorityNormal Priority = 0
)

// String returns "low" or "normal", the priority label of the metrics.
func (p Priority) String() string {
	if p < PriorityNormal {
		return "low"
	}
	return "normal"
}

// clamp maps every Priority to one of the two the queue knows: below
// PriorityLow is low, above PriorityNormal is normal.
func (p Priority) clamp() Priority {
	if p < PriorityNormal {
		return PriorityLow
	}
	return PriorityNormal
}

// lane is the index of p's per-priority metrics.
func (p Priority) lane() int {
	if p < PriorityNormal {
		return 0
	}
	return 1
}

// DefaultMaxLowWait is how long a low-priority key waits at most before
// Get prefers it to normal-priority keys (Options.MaxLowWait).
//
// Ten seconds lets a burst of changes go ahead of a large initial list,
// which is the point of the priorities, while a controller that is busy
// with changes for a long time still reaches its initial-list keys within
// seconds, not minutes.
const DefaultMaxLowWait = 10 * time.Second

// AddOptions says how AddWith adds a key. The zero value adds it now at
// normal priority, like Add.
type AddOptions struct {
	// Priority is the lane the key waits in. A key already waiting at a
	// lower priority moves up; one waiting at a higher priority stays.
	Priority Priority
	// After, when positive, adds the key once it has elapsed, like
	// AddAfter; the key then waits at Priority.
	After time.Duration
}

// AddWith adds item as opts says: at once or after opts.After, at
// opts.Priority. Dedup is as for Add, whatever the priority: a key waits
// once, and a key being processed is queued again at Done, at the highest
// priority it was re-added with meanwhile.
func (q *Queue[K]) AddWith(item K, opts AddOptions) {
	p := opts.Priority.clamp()
	if opts.After > 0 {
		q.addAfter(item, opts.After, p)
		return
	}
	h := q.items.hash(item)
	now := q.metricsNow()
	q.mu.Lock()
	q.addLocked(item, h, now, p)
	q.mu.Unlock()
}

// GetWithPriority is Get that also returns the priority the key waited
// at, so that a worker can requeue it (AddWith, AddRateLimitedWith) at the
// same priority: an initial-list key that fails stays low.
func (q *Queue[K]) GetWithPriority() (item K, p Priority, shutdown bool) {
	q.mu.Lock()
	for q.ready.len() == 0 && q.low.len() == 0 && !q.shuttingDown {
		q.waiters++
		q.cond.Wait()
		q.waiters--
	}
	if q.ready.len() == 0 && q.low.len() == 0 {
		q.mu.Unlock()
		return item, PriorityNormal, true
	}
	if q.lowDueLocked() {
		item = q.popLowLocked()
		p = PriorityLow
	} else {
		item = q.ready.pop()
		q.gets++ // item's state is now processing
	}
	q.processing++
	if q.metricsOn {
		now := q.now()
		q.m.depth.Dec()
		q.m.depthBy[p.lane()].Dec()
		wait := seconds(time.Duration(now - q.addedAt[item]))
		q.m.latency.Observe(wait)
		q.m.waitBy[p.lane()].Observe(wait)
		delete(q.addedAt, item)
		q.startedAt[item] = now
	}
	q.mu.Unlock()
	return item, p, false
}

// lowDueLocked reports whether Get serves the low lane next: when the
// normal lane is empty, or when the oldest low key has waited maxLowWait.
// It reads the clock only when both lanes hold keys. q.mu must be held and
// at least one lane not empty.
func (q *Queue[K]) lowDueLocked() bool {
	if q.low.len() == 0 {
		return false
	}
	if q.ready.len() == 0 {
		return true
	}
	return q.now()-q.low.oldestLocked() >= q.maxLowWait
}

// popLowLocked hands out the oldest low key: it enters items in state
// processing. q.mu must be held and the low lane not empty.
func (q *Queue[K]) popLowLocked() K {
	item := q.low.popLocked()
	// A ticket at or below gets reads as processing (stateOf); gets
	// starts at 1, so the mark is never zero.
	h := q.items.hash(item)
	i, _ := q.items.find(item, h) // absent: a low key is never in items
	q.items.insertAt(i, item, h, queuedAt(q.gets))
	return item
}

// pushLowLocked queues item in the low lane, as added at now, and wakes
// one Get. q.mu must be held and item be neither in items nor in the lane.
func (q *Queue[K]) pushLowLocked(item K, now stamp) {
	q.low.pushLocked(item, now)
	q.m.depth.Inc()
	q.m.depthBy[PriorityLow.lane()].Inc()
	if q.waiters > 0 {
		q.cond.Signal()
	}
}

// lowEntry is one key in the low lane's FIFO. It is live while the lane's
// index holds the same seq for its key.
type lowEntry[K comparable] struct {
	key K
	at  stamp // when it was queued, for aging
	seq uint64
}

// lowLane holds the keys ready at low priority, oldest first. Every field
// is guarded by the owning Queue's mu.
type lowLane[K comparable] struct {
	// fifo orders the keys by the time they were queued; entries whose seq
	// differs from index are stale (the key moved up) and are skipped.
	fifo ring[lowEntry[K]]
	// index holds the seq of the live entry of every key queued at low
	// priority: exactly those keys, each once. None of them is in the
	// queue's items table.
	index   map[K]uint64
	nextSeq uint64
}

func (l *lowLane[K]) len() int { return len(l.index) }

func (l *lowLane[K]) has(item K) bool {
	_, ok := l.index[item]
	return ok
}

func (l *lowLane[K]) pushLocked(item K, now stamp) {
	if l.index == nil {
		l.index = make(map[K]uint64)
	}
	l.nextSeq++
	l.index[item] = l.nextSeq
	l.fifo.push(lowEntry[K]{key: item, at: now, seq: l.nextSeq})
}

// removeLocked takes item out of the lane (it moves up to normal). Its
// FIFO entry goes stale.
func (l *lowLane[K]) removeLocked(item K) {
	delete(l.index, item)
	if !l.releaseLocked() {
		l.compactLocked()
	}
}

// dropStaleLocked pops the stale entries at the head of the FIFO, so that
// the head is the oldest live key.
func (l *lowLane[K]) dropStaleLocked() {
	for l.fifo.len() > 0 {
		e := l.fifo.buf[l.fifo.head]
		if seq, ok := l.index[e.key]; ok && seq == e.seq {
			return
		}
		l.fifo.pop()
	}
}

// oldestLocked is when the oldest live key was queued. The lane must not
// be empty.
func (l *lowLane[K]) oldestLocked() stamp {
	l.dropStaleLocked()
	return l.fifo.buf[l.fifo.head].at
}

// popLocked removes and returns the oldest live key. The lane must not be
// empty.
func (l *lowLane[K]) popLocked() K {
	l.dropStaleLocked()
	e := l.fifo.pop()
	delete(l.index, e.key)
	l.releaseLocked()
	return e.key
}

// keptLow is the most keys the low lane's storage may have grown to hold
// and still be kept once the lane is empty.
const keptLow = 256

// releaseLocked drops the lane's storage once it is empty, if a burst grew
// it past keptLow keys, and reports whether it did. The lane takes the
// bursts (an initial list, a relist, a resync queues every key), and
// neither its map nor its ring gives memory back by itself: without this a
// controller of 100,000 objects would hold the lane's peak for good after
// its start. Every entry left in the FIFO is stale when the index is empty,
// so nothing is lost; the next burst grows the lane again, at O(1)
// amortized cost per key, as a swing of that size had to queue that many
// keys first.
func (l *lowLane[K]) releaseLocked() bool {
	if len(l.index) > 0 || len(l.fifo.buf) <= keptLow {
		return false
	}
	l.index, l.fifo = nil, ring[lowEntry[K]]{}
	return true
}

// compactLocked rebuilds the FIFO without its stale entries once they
// outnumber the live ones: memory follows the number of low keys, not the
// number of moves, at O(1) amortized cost per move.
func (l *lowLane[K]) compactLocked() {
	if l.fifo.len() <= 2*len(l.index)+minRing {
		return
	}
	var live ring[lowEntry[K]]
	for l.fifo.len() > 0 {
		e := l.fifo.pop()
		if seq, ok := l.index[e.key]; ok && seq == e.seq {
			live.push(e)
		}
	}
	l.fifo = live
}
