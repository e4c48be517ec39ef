package queue

import "time"

// Delayed adds.
//
// Keys given to AddAfter wait in a min-heap ordered by due time, indexed by
// key so a key waits at most once. No goroutine runs a delay loop: one
// timer from the queue's Clock is armed for the earliest due time, its
// callback moves every due key to the ready queue and re-arms it for the
// next one. The timer is created on the first AddAfter and stopped by
// ShutDown, so an idle or shut-down queue holds no goroutine at all.

// delayed is one key waiting for its due time.
type delayed[K comparable] struct {
	item K
	at   stamp
	prio Priority // the priority it is added at when due
}

// delayState is the heap of waiting keys and the timer that serves it.
// Every field is guarded by the owning Queue's mu.
type delayState[K comparable] struct {
	// heap is a binary min-heap on at.
	heap []delayed[K]
	// index maps each key in heap to its position; a key is in heap at
	// most once.
	index map[K]int
	// timer is nil until the first AddAfter.
	timer Timer
	// armed says the timer will fire at armedAt; armedAt is then never
	// later than heap[0].at.
	armed   bool
	armedAt stamp
}

// AddAfter adds item at normal priority once d has elapsed. If item is
// already waiting for an earlier time, that time is kept; if for a later
// time, it moves earlier. A d of zero or less adds at once. After ShutDown
// it does nothing. AddWith delays at low priority.
func (q *Queue[K]) AddAfter(item K, d time.Duration) {
	q.AddWith(item, AddOptions{After: d})
}

// addAfter is AddAfter at priority p, with d > 0. A key already waiting
// for its time keeps the higher of the two priorities.
func (q *Queue[K]) addAfter(item K, d time.Duration, p Priority) {
	now := q.now()
	at := now + stamp(d)
	if at < now { // overflow: due at the end of time
		at = maxStamp
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	q.delay.insertLocked(item, at, p)
	q.armLocked(now)
}

// armLocked makes the timer fire at the earliest due time if it is not
// already set to fire by then. q.mu must be held and the heap not empty.
func (q *Queue[K]) armLocked(now stamp) {
	ds := &q.delay
	due := ds.heap[0].at
	if ds.armed && ds.armedAt <= due {
		return
	}
	wait := time.Duration(max(0, due-now))
	if ds.timer == nil {
		ds.timer = q.clock.AfterFunc(wait, q.fireDelayed)
	} else {
		ds.timer.Reset(wait)
	}
	ds.armed, ds.armedAt = true, due
}

// fireDelayed is the timer callback: it moves every due key to the ready
// queue and re-arms the timer for the next. Running it more often than
// needed is harmless, which makes racing Reset calls safe.
func (q *Queue[K]) fireDelayed() {
	now := q.now()
	q.mu.Lock()
	defer q.mu.Unlock()
	ds := &q.delay
	ds.armed = false
	if q.shuttingDown {
		return
	}
	var addStamp stamp
	if q.metricsOn {
		addStamp = now
	}
	for len(ds.heap) > 0 && ds.heap[0].at <= now {
		e := ds.popLocked()
		q.addLocked(e.item, q.items.hash(e.item), addStamp, e.prio)
	}
	if len(ds.heap) > 0 {
		q.armLocked(now)
	}
}

// stopLocked stops the timer and drops every waiting key.
func (ds *delayState[K]) stopLocked() {
	if ds.timer != nil {
		ds.timer.Stop()
	}
	ds.armed = false
	ds.heap = nil
	clear(ds.index)
}

// waitingLocked returns the number of keys waiting for their due time.
func (ds *delayState[K]) waitingLocked() int { return len(ds.heap) }

// insertLocked adds item due at at with priority p, keeping an earlier
// due time and a higher priority if item is already waiting.
func (ds *delayState[K]) insertLocked(item K, at stamp, p Priority) {
	if i, ok := ds.index[item]; ok {
		ds.heap[i].prio = max(ds.heap[i].prio, p)
		if at < ds.heap[i].at {
			ds.heap[i].at = at
			ds.up(i)
		}
		return
	}
	ds.heap = append(ds.heap, delayed[K]{item: item, at: at, prio: p})
	ds.index[item] = len(ds.heap) - 1
	ds.up(len(ds.heap) - 1)
}

// popLocked removes and returns the entry with the earliest due time.
func (ds *delayState[K]) popLocked() delayed[K] {
	top := ds.heap[0]
	last := len(ds.heap) - 1
	ds.swap(0, last)
	ds.heap[last] = delayed[K]{} // do not keep the key alive
	ds.heap = ds.heap[:last]
	delete(ds.index, top.item)
	if last > 0 {
		ds.down(0)
	}
	return top
}

func (ds *delayState[K]) swap(i, j int) {
	ds.heap[i], ds.heap[j] = ds.heap[j], ds.heap[i]
	ds.index[ds.heap[i].item] = i
	ds.index[ds.heap[j].item] = j
}

func (ds *delayState[K]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if ds.heap[parent].at <= ds.heap[i].at {
			return
		}
		ds.swap(i, parent)
		i = parent
	}
}

func (ds *delayState[K]) down(i int) {
	n := len(ds.heap)
	for {
		least := i
		if l := 2*i + 1; l < n && ds.heap[l].at < ds.heap[least].at {
			least = l
		}
		if r := 2*i + 2; r < n && ds.heap[r].at < ds.heap[least].at {
			least = r
		}
		if least == i {
			return
		}
		ds.swap(i, least)
		i = least
	}
}
