package events

import (
	"container/list"
	"time"
)

// aggKey identifies repeats of one event: the same object, type, reason
// and message. A recorder has one reporter, so the source is not part of it.
type aggKey struct {
	ref                  ObjectReference
	typ, reason, message string
}

// stored is what the recorder knows of an Event it wrote.
type stored struct {
	key         aggKey
	name        string // metadata.name
	namespace   string
	count       int32
	first, last time.Time
}

// correlator remembers the Events written recently, so that a repeat
// patches the stored Event's count and lastTimestamp instead of writing a
// new one, as client-go's event correlator does. It is bounded: past max
// entries the least recently seen is forgotten (its next repeat starts a
// new Event). It is owned by the recorder's Run goroutine and not safe
// for concurrent use.
type correlator struct {
	window time.Duration
	max    int
	// entries indexes lru by key; every element of lru is a *stored and
	// is in entries exactly once. The front is the most recently seen.
	entries map[aggKey]*list.Element
	lru     *list.List
}

func newCorrelator(window time.Duration, max int) *correlator {
	return &correlator{window: window, max: max, entries: make(map[aggKey]*list.Element), lru: list.New()}
}

// observe records an occurrence of k at now and returns the Event it
// belongs to and whether it is a repeat. A repeat (seen before, the last
// time at most window ago) has its count raised and last set to now; a
// new occurrence gets a new entry named by newName, count 1. Times that go
// backwards are taken as the last time seen.
func (c *correlator) observe(k aggKey, namespace string, now time.Time, newName func() string) (s stored, repeat bool) {
	if e, ok := c.entries[k]; ok {
		st := e.Value.(*stored)
		if now.Before(st.last) {
			now = st.last
		}
		if now.Sub(st.last) <= c.window {
			st.count++
			st.last = now
			c.lru.MoveToFront(e)
			return *st, true
		}
		c.lru.Remove(e)
		delete(c.entries, k)
	}
	st := &stored{key: k, name: newName(), namespace: namespace, count: 1, first: now, last: now}
	c.entries[k] = c.lru.PushFront(st)
	for c.lru.Len() > c.max {
		oldest := c.lru.Back()
		delete(c.entries, oldest.Value.(*stored).key)
		c.lru.Remove(oldest)
	}
	return *st, false
}

// forget drops k, whose Event could not be written: its next occurrence
// starts a new one.
func (c *correlator) forget(k aggKey) {
	if e, ok := c.entries[k]; ok {
		c.lru.Remove(e)
		delete(c.entries, k)
	}
}

// len returns the number of Events remembered.
func (c *correlator) len() int { return c.lru.Len() }
