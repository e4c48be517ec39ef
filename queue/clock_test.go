package queue

import (
	"slices"
	"sync"
	"time"
)

// fakeClock is a Clock whose time moves only when a test calls Step. Timer
// callbacks run synchronously inside Step, in due order, so a test sees
// their effect as soon as Step returns.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer // active timers
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

type fakeTimer struct {
	c  *fakeClock
	at time.Time
	f  func()
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	t := &fakeTimer{c: c, f: f}
	t.Reset(d)
	return t
}

// pending returns the number of active timers.
func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Step moves time forward by d and runs every timer due by then.
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
	for {
		t := c.popDue()
		if t == nil {
			return
		}
		t.f()
	}
}

// popDue deactivates and returns the earliest due timer, or nil.
func (c *fakeClock) popDue() *fakeTimer {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := -1
	for j, t := range c.timers {
		if !t.at.After(c.now) && (i < 0 || t.at.Before(c.timers[i].at)) {
			i = j
		}
	}
	if i < 0 {
		return nil
	}
	t := c.timers[i]
	c.timers = slices.Delete(c.timers, i, i+1)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.removeLocked()
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.removeLocked()
	t.at = t.c.now.Add(d)
	t.c.timers = append(t.c.timers, t)
	return was
}

func (t *fakeTimer) removeLocked() bool {
	i := slices.Index(t.c.timers, t)
	if i < 0 {
		return false
	}
	t.c.timers = slices.Delete(t.c.timers, i, i+1)
	return true
}
