package controller

import "time"

// A cache can come to show a write with no event of the written object:
// its resourceVersion passes the write's through a bookmark, another
// object's event, or a relist that found the object already come and gone
// (a 410 during the cache's lag). No observed call then settles the keys
// parked on the write or wakes the reads waiting for it. So while a key is
// parked or a read waits, the waits are re-checked every shownRecheck: a
// key whose caches show its writes is queued again, and the reads look
// once more. A re-check settles only the parked keys that wait on a cache
// whose resourceVersion moved since the last one, or that parked or got
// a write since (what a cache holds of an object changes only through
// events of it, which settle its keys themselves; and a key looked at
// before is shown or not by its caches' resourceVersions alone, which
// may go back, after a relist from a server restored to an older state,
// and forward to the same one), so it costs a look at each key and a
// comparison per parked write and cache.

// shownRecheck is how long a write shown without an event of its object
// goes unnoticed at most.
const shownRecheck = time.Second

// armRecheckLocked makes sure a re-check is due, unless the controllers
// have stopped. Expects e.mu held.
func (e *expectations) armRecheckLocked() {
	if e.recheck == nil && !e.stopped {
		e.recheck = time.AfterFunc(shownRecheck, e.recheckShown)
	}
}

// recheckShown is the re-check: it queues the parked keys that every
// cache now shows the writes of, and wakes the reads.
func (e *expectations) recheckShown() {
	for _, add := range e.recheckShownLocking() {
		add()
	}
}

// recheckShownLocking is recheckShown's part under e.mu: it returns the
// queue calls to make once e.mu is released.
func (e *expectations) recheckShownLocking() (adds []func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.recheck = nil
	if e.stopped {
		return nil
	}
	rvs := make(map[*cacheEntry]string, len(e.checkedRV))
	parked := false
	for kr, kw := range e.keys {
		if kw.add == nil {
			continue // not parked: its next reconcile looks itself
		}
		fresh := kw.fresh
		kw.fresh = false
		if !e.movedLocked(kw, rvs) && !fresh {
			parked = true
			continue
		}
		add := kw.add
		if !e.settleLocked(kr, kw) {
			parked = true
			continue
		}
		adds = append(adds, queueKey(add, kr.key))
	}
	e.checkedRV = rvs
	if e.watched {
		close(e.changed)
		e.changed, e.watched = make(chan struct{}), false
	}
	if parked {
		e.armRecheckLocked()
	}
	return adds
}

// movedLocked reports whether a cache kw waits on has a resourceVersion
// other than at the last re-check (or was not looked at then), reading
// each cache's once per re-check into rvs. Expects e.mu held.
func (e *expectations) movedLocked(kw *keyWait, rvs map[*cacheEntry]string) bool {
	moved := false
	for _, w := range kw.writes {
		for _, c := range w.caches {
			rv, ok := rvs[c]
			if !ok {
				rv = c.storeRV()
				rvs[c] = rv
			}
			if before, ok := e.checkedRV[c]; !ok || before != rv {
				moved = true
			}
		}
	}
	return moved
}
