package controller

import (
	"context"
	"fmt"
	"time"
)

// The read side of the expectations (expect.go): a Reader's Get of an
// object this process wrote waits until its cache shows the write, and
// past the bound gets a *NotShownError for as long as the cache does not.

// overdueRecheck is how often, at most, the overdue writes are re-checked:
// a cache event or a write costs O(1) amortized, not O(overdue), however
// far a cache lags.
const overdueRecheck = time.Second

// recheckOverdueLocked drops the overdue writes that every cache now
// shows, unless they were re-checked less than overdueRecheck ago.
func (e *expectations) recheckOverdueLocked(now time.Time) {
	if len(e.overdue) == 0 || now.Sub(e.overdueChecked) < overdueRecheck {
		return
	}
	e.overdueChecked = now
	for ref := range e.overdue {
		e.pruneLocked(e.objects[ref]) // deletes ref from overdue when shown
	}
}

// waitShown waits until cache c shows this process's latest write of the
// object at key, if there is one: for a read that must not be older than
// the reader's own write. It returns the write it last looked at (nil for
// none), for readOlder, or an error naming the write when ctx ends or the
// bound passes first.
func (e *expectations) waitShown(ctx context.Context, c *cacheEntry, key string) (*pendingWrite, error) {
	if e == nil || e.timeout <= 0 {
		return nil, nil
	}
	ref := objRef{c.res, key}
	// The timer runs to the bound of the write waited on: a later write
	// of the object replaces it, and moves the bound. When it fires the
	// loop looks once more. A cache that comes to show the write without
	// an event of the object (a bookmark) wakes the read within
	// shownRecheck (expect_recheck.go).
	var timer *time.Timer
	var timed *pendingWrite
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		e.mu.Lock()
		w := e.objects[ref]
		if w == nil || c.readDone(w) {
			e.mu.Unlock()
			if w != nil && w.readRV() > 0 && c.reachedRV(w.readRV()) {
				// Past the write's read version: nothing the cache comes to
				// hold later is older than it, whatever its version.
				return nil, nil
			}
			return w, nil
		}
		changed, left := e.changed, time.Until(w.at.Add(e.timeout))
		e.watched = true
		e.armRecheckLocked()
		e.mu.Unlock()
		if left <= 0 {
			return w, &NotShownError{Write: w.String(), After: e.timeout}
		}
		if w != timed {
			if timer != nil {
				timer.Stop()
			}
			timer, timed = time.NewTimer(left), w
		}
		select {
		case <-changed:
		case <-timer.C:
		case <-ctx.Done():
			return w, fmt.Errorf("controller: waiting for the cache to show %s: %w", w, ctx.Err())
		}
	}
}

func (w *pendingWrite) waitsFor(c *cacheEntry) bool {
	for _, x := range w.caches {
		if x == c {
			return true
		}
	}
	return false
}

// NotShownError is a read's error when the cache did not show this
// process's own write of the object within the expectation bound: reading
// the cache would return an object older than what this process wrote.
type NotShownError struct {
	Write string        // the write, as "pods ns/name at resourceVersion 42"
	After time.Duration // the bound
}

func (e *NotShownError) Error() string {
	return fmt.Sprintf("controller: the cache has not shown this process's write (%s) within %v", e.Write, e.After)
}
