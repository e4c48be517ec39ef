package queue

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kwatch/kwatch/metrics"
)

// Options configures New. The zero value is a queue named "default" on the
// real clock with no metrics.
type Options struct {
	// Name labels the queue's metrics (name="<Name>"). Zero means "default".
	Name string
	// Clock is the source of time for delayed adds and metrics. Nil means
	// the real clock.
	Clock Clock
	// Metrics receives the queue's workqueue_* series. Nil means
	// metrics.Noop, and then the queue reads no clock on Add, Get or Done
	// of normal-priority keys.
	Metrics metrics.Provider
	// MaxLowWait bounds how long a low-priority key waits while
	// normal-priority keys keep coming: once the oldest low key has been
	// ready this long, Get hands it out before any normal key. Zero means
	// DefaultMaxLowWait; a negative value is treated as zero (NewRunner
	// refuses it).
	MaxLowWait time.Duration
}

// itemState is where a key is in the queue. A key that is neither ready
// nor being processed has no state (the zero value).
type itemState uint8

const (
	// stateQueued: the key is in ready, waiting for Get.
	stateQueued itemState = iota + 1
	// stateProcessing: Get handed the key out and Done has not been
	// called. The key is not in ready, so no second worker can get it.
	stateProcessing
	// stateRequeue: like stateProcessing, and the key was added again
	// meanwhile; Done puts it back in ready.
	stateRequeue
)

// mark is what the queue records for a key that is ready at normal
// priority or being processed: the ticket of the key's latest push to
// ready, shifted left by two, with bit 0 set when the key was added again
// while being processed and bit 1 set when every such add was at low
// priority. Tickets number the pushes from 2 (gets starts at 1), and a key
// handed out from the low lane gets the ticket gets, so a mark is never
// zero.
//
// The mark encodes the key's state without Get having to update it: a key
// is queued while Get has handed out fewer keys than its ticket, and
// being processed after (see Queue.stateOf). Get therefore only pops the
// ring and never touches the key's entry in items.
type mark uint64

// queuedAt returns the mark of a key pushed to ready with ticket t.
func queuedAt(t uint64) mark { return mark(t << 2) }

// ticket returns the ticket of the key's latest push to ready.
func (m mark) ticket() uint64 { return uint64(m >> 2) }

// requeued reports whether the key was added while being processed.
func (m mark) requeued() bool { return m&1 != 0 }

// requeuePriority is the priority Done queues a requeued key at: the
// highest of the adds while it was processed.
func (m mark) requeuePriority() Priority {
	if m&2 != 0 {
		return PriorityLow
	}
	return PriorityNormal
}

// withRequeue returns m with the re-added bit set by an add at p.
func (m mark) withRequeue(p Priority) mark {
	switch {
	case !m.requeued() && p == PriorityLow:
		return m | 3
	case !m.requeued():
		return m | 1
	case p == PriorityNormal:
		return m &^ 2 // a normal add wins over earlier low ones
	}
	return m
}

// stamp is a point in time as nanoseconds since the queue's epoch: a
// quarter of the size of a time.Time in the queue's maps and heap.
type stamp int64

const maxStamp = stamp(1<<63 - 1)

// Queue is a deduplicating work queue of keys of type K, with delayed adds.
//
//   - Add of a key that is already waiting does nothing: it is processed once.
//   - A key handed out by Get is not handed out again until Done is called
//     for it; an Add in between makes Done queue it once more.
//   - AddAfter makes a key ready after a delay; the earliest request wins.
//
// Memory is bounded by the number of distinct keys, not by the number of
// adds: every internal set holds a key at most once.
//
// The zero value is not usable; create a Queue with New. All methods are
// safe for concurrent use. Most callers want a Runner, which owns a queue
// and its workers; use a Queue directly to write your own worker loop:
//
//	for {
//		key, shutdown := q.Get()
//		if shutdown {
//			return
//		}
//		process(key)
//		q.Done(key)
//	}
type Queue[K comparable] struct {
	name      string
	clock     Clock
	epoch     time.Time // stamps count from here
	metricsOn bool      // false: m is all no-ops and no clock is read for it
	m         queueMetrics

	mu sync.Mutex
	// cond.L is &mu. It is signalled when an item enters ready and
	// broadcast on shutdown; waiters counts the Get calls blocked on it so
	// that Add skips the signal when nobody waits.
	cond    sync.Cond
	waiters int
	// items holds the mark of every key that is ready or being
	// processed; a key in neither is absent. One table serves both the
	// dedup and the exclusivity checks. Add and Done hash their key before
	// taking mu; Get does not touch items.
	items table[K]
	// ready holds the normal-priority keys waiting for Get, oldest first:
	// exactly the keys in items whose state is queued, each once.
	ready ring[K]
	// low holds the low-priority keys waiting for Get (priority.go); they
	// are not in items. A key is in at most one of items and low.
	low lowLane[K]
	// maxLowWait is Options.MaxLowWait as a stamp difference.
	maxLowWait stamp
	// gets is 1 plus the number of keys Get has handed out from ready. The
	// key pushed to ready with ticket t has been handed out once gets >= t.
	gets uint64
	// processing counts the keys in state processing or requeue.
	processing int
	// addedAt and startedAt hold, only when metrics are on, the time of the
	// add a key is waiting on (for the queue-duration metric) and the time
	// of its Get (for the work-duration metric).
	addedAt, startedAt map[K]stamp
	// shuttingDown is set once by ShutDown; then adds are ignored and Get
	// returns shutdown=true as soon as ready is empty.
	shuttingDown bool
	// drained, when not nil, is closed by Done when processing falls to
	// zero; ShutDownWithDrain waits on it.
	drained chan struct{}
	// delay holds the keys of AddAfter until they are due (delaying.go).
	delay delayState[K]
}

// New returns an empty queue. It starts no goroutine: delayed adds arm a
// timer from Options.Clock, which ShutDown stops.
func New[K comparable](opts Options) *Queue[K] {
	q := &Queue[K]{
		name:  opts.Name,
		clock: clockOrReal(opts.Clock),
		items: newTable[K](),
		gets:  1,
	}
	q.maxLowWait = stamp(opts.MaxLowWait)
	if q.maxLowWait <= 0 {
		q.maxLowWait = stamp(DefaultMaxLowWait)
	}
	if q.name == "" {
		q.name = "default"
	}
	q.epoch = q.clock.Now()
	q.cond.L = &q.mu
	q.delay.index = make(map[K]int)
	var provider metrics.Provider
	provider, q.metricsOn = metrics.OrNoop(opts.Metrics)
	q.m = newQueueMetrics(provider, q.name)
	if q.metricsOn {
		q.addedAt, q.startedAt = make(map[K]stamp), make(map[K]stamp)
		l := metrics.Label{Name: "name", Value: q.name}
		provider.GaugeFunc(MetricUnfinishedWork, "How many seconds of work has been done that is in progress and has not been observed by work_duration. Large values indicate stuck threads.", q.unfinishedWorkSeconds, l)
		provider.GaugeFunc(MetricLongestRunningProcessor, "How many seconds has the longest running processor for workqueue been running.", q.longestRunningSeconds, l)
	}
	return q
}

// Name returns the name the queue's metrics carry.
func (q *Queue[K]) Name() string { return q.name }

// now returns the clock's time as a stamp.
func (q *Queue[K]) now() stamp { return stamp(q.clock.Now().Sub(q.epoch)) }

// metricsNow returns now() when metrics are on and zero otherwise, so the
// hot path reads no clock without metrics.
func (q *Queue[K]) metricsNow() stamp {
	if q.metricsOn {
		return q.now()
	}
	return 0
}

// Add marks item as needing processing, at normal priority. It does
// nothing if item is already waiting at normal priority or the queue is
// shutting down; a key waiting at low priority moves up. If item is being
// processed it is queued again when Done is called for it.
func (q *Queue[K]) Add(item K) {
	h := q.items.hash(item)
	now := q.metricsNow()
	q.mu.Lock()
	q.addLocked(item, h, now, PriorityNormal)
	q.mu.Unlock()
}

// addLocked is AddWith with q.mu held; h is the hash of item in q.items,
// now the add time for metrics and p the priority, clamped.
func (q *Queue[K]) addLocked(item K, h uint64, now stamp, p Priority) {
	if q.shuttingDown {
		return
	}
	i, found := q.items.find(item, h)
	switch {
	case found && q.stateOf(q.items.mark(i)) == stateQueued:
		return // already waiting at normal priority: deduplicated
	case found:
		m := q.items.mark(i)
		q.items.setMark(i, m.withRequeue(p)) // Done moves it to ready
		if m.requeued() {
			return // already to be requeued: deduplicated
		}
	case q.low.len() > 0 && q.low.has(item):
		if p == PriorityLow {
			return // already waiting at low priority: deduplicated
		}
		q.moveUpLocked(item, i, h)
		return
	case p == PriorityLow:
		if !q.metricsOn {
			now = q.now() // aging needs the time even without metrics
		}
		q.pushLowLocked(item, now)
	default:
		m := q.pushLocked(item)
		q.items.insertAt(i, item, h, m)
	}
	q.m.adds.Inc()
	if q.metricsOn {
		q.addedAt[item] = now
	}
}

// stateOf returns the state of a key whose mark is m. q.mu must be held.
func (q *Queue[K]) stateOf(m mark) itemState {
	switch {
	case m.ticket() > q.gets:
		return stateQueued
	case m.requeued():
		return stateRequeue
	default:
		return stateProcessing
	}
}

// moveUpLocked moves item, waiting at low priority, to the normal lane;
// i is the slot find returned for it (absent) in items. Its add time, for
// the wait metrics, stays the first add's.
func (q *Queue[K]) moveUpLocked(item K, i int, h uint64) {
	q.low.removeLocked(item)
	q.m.depth.Dec()
	q.m.depthBy[PriorityLow.lane()].Dec()
	q.items.insertAt(i, item, h, q.pushLocked(item))
}

// pushLocked appends item to ready, wakes one Get and returns the mark of
// a key queued by this push. q.mu must be held.
func (q *Queue[K]) pushLocked(item K) mark {
	q.ready.push(item)
	q.m.depth.Inc()
	q.m.depthBy[PriorityNormal.lane()].Inc()
	if q.waiters > 0 {
		q.cond.Signal()
	}
	return queuedAt(q.gets + uint64(q.ready.len()))
}

// Get blocks until a key is ready or the queue is shut down, and hands the
// key out for processing. The caller must call Done(key) when finished.
// shutdown is true only when the queue is shut down and no key is ready;
// keys already ready at shutdown are still handed out. Normal-priority
// keys go first, in the order they were queued; low-priority ones when no
// normal key is ready or once the oldest has waited Options.MaxLowWait.
func (q *Queue[K]) Get() (item K, shutdown bool) {
	item, _, shutdown = q.GetWithPriority()
	return item, shutdown
}

// Done marks item as processed. If it was added while being processed it
// becomes ready again now. Done of a key that is not being processed does
// nothing.
func (q *Queue[K]) Done(item K) {
	h := q.items.hash(item)
	now := q.metricsNow()
	q.mu.Lock()
	i, found := q.items.find(item, h)
	if !found {
		q.mu.Unlock()
		return // neither ready nor being processed
	}
	switch q.stateOf(q.items.mark(i)) {
	case stateProcessing:
		q.items.deleteAt(i)
	case stateRequeue:
		if q.items.mark(i).requeuePriority() == PriorityLow {
			q.items.deleteAt(i)
			q.pushLowLocked(item, q.now())
		} else {
			q.items.setMark(i, q.pushLocked(item))
		}
	default:
		q.mu.Unlock()
		return // ready, not being processed
	}
	q.processing--
	if q.metricsOn {
		q.m.work.Observe(seconds(time.Duration(now - q.startedAt[item])))
		delete(q.startedAt, item)
	}
	if q.drained != nil && q.processing == 0 {
		close(q.drained)
		q.drained = nil
	}
	q.mu.Unlock()
}

// Len returns the number of keys ready for Get, at either priority. Keys
// being processed and keys waiting for an AddAfter delay are not counted.
func (q *Queue[K]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ready.len() + q.low.len()
}

// ShutDown makes the queue ignore further adds, drops the keys waiting for
// a delay, and wakes every Get. Keys already ready are still handed out;
// after them Get returns shutdown=true. It does not wait for keys being
// processed; see ShutDownWithDrain. Calling it again does nothing.
func (q *Queue[K]) ShutDown() {
	q.mu.Lock()
	q.shutDownLocked()
	q.mu.Unlock()
}

// shutDownLocked is ShutDown with q.mu held.
func (q *Queue[K]) shutDownLocked() {
	q.shuttingDown = true
	q.delay.stopLocked()
	q.cond.Broadcast()
}

// ShutDownWithDrain shuts the queue down like ShutDown, then waits until no
// key is being processed (every Get has had its Done) or ctx ends. It
// returns nil when drained, or an error wrapping the context's cause.
// Callers must keep calling Done from their workers, or it cannot return
// before ctx ends.
func (q *Queue[K]) ShutDownWithDrain(ctx context.Context) error {
	q.mu.Lock()
	q.shutDownLocked()
	if q.processing == 0 {
		q.mu.Unlock()
		return nil
	}
	if q.drained == nil {
		q.drained = make(chan struct{})
	}
	drained := q.drained
	q.mu.Unlock()
	select {
	case <-drained:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("queue %q: drain: %w", q.name, context.Cause(ctx))
	}
}

// ShuttingDown reports whether ShutDown has been called.
func (q *Queue[K]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}

// unfinishedWorkSeconds sums how long the keys in processing have been
// processed. It is computed at scrape time, so no goroutine updates it.
func (q *Queue[K]) unfinishedWorkSeconds() float64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now() // under the lock: no Get can stamp a later start
	var total time.Duration
	for _, start := range q.startedAt {
		total += time.Duration(now - start)
	}
	return seconds(total)
}

// longestRunningSeconds is the age of the oldest key in processing.
func (q *Queue[K]) longestRunningSeconds() float64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	var longest time.Duration
	for _, start := range q.startedAt {
		longest = max(longest, time.Duration(now-start))
	}
	return seconds(longest)
}
