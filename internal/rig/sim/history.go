package sim

import (
	"sort"
	"time"
)

// eventType is the kind of change an event records.
type eventType uint8

const (
	evAdded eventType = iota
	evModified
	evDeleted
)

// event is one committed change. Every commit bumps the global resourceVersion by
// exactly one and records exactly one event, so event resourceVersions are consecutive.
type event struct {
	rv   uint64
	typ  eventType
	res  *resource
	obj  *object // the state after the change; for evDeleted the last state at rv
	prev *object // the state before; nil for evAdded
	at   time.Time
}

// history is a ring of the most recent events. It is guarded by store.mu.
type history struct {
	buf  []event
	head int    // index of the oldest event in buf
	n    int    // number of events held
	next uint64 // resourceVersion the next event will get
}

func newHistory(size int) history { return history{buf: make([]event, size), next: 1} }

// oldest returns the resourceVersion of the oldest retained event (== next when empty).
func (h *history) oldest() uint64 { return h.next - uint64(h.n) }

// push appends ev (whose rv must be h.next) and returns the evicted event's rv, or 0.
func (h *history) push(ev event) (evicted uint64) {
	if h.n == len(h.buf) {
		evicted = h.buf[h.head].rv
		h.buf[h.head] = event{}
		h.head = (h.head + 1) % len(h.buf)
		h.n--
	}
	h.buf[(h.head+h.n)%len(h.buf)] = ev
	h.n++
	h.next = ev.rv + 1
	return evicted
}

// get returns the event with resourceVersion rv; it must be retained.
func (h *history) get(rv uint64) *event {
	return &h.buf[(h.head+int(rv-h.oldest()))%len(h.buf)]
}

// retained reports whether every event after rv is still held.
func (h *history) retained(rv uint64) bool { return rv+1 >= h.oldest() }

// clear drops every event (a server restart that loses its cache).
func (h *history) clear() {
	for i := range h.buf {
		h.buf[i] = event{}
	}
	h.head, h.n = 0, 0
}

// windowFloor returns the newest resourceVersion whose event is older than cutoff,
// or 0: clients may not resume from before it. Events are in commit order, and
// commit times come from one clock, so a binary search suffices.
func (h *history) windowFloor(cutoff time.Time) uint64 {
	i := sort.Search(h.n, func(i int) bool {
		return !h.buf[(h.head+i)%len(h.buf)].at.Before(cutoff)
	})
	if i == 0 {
		return 0
	}
	return h.buf[(h.head+i-1)%len(h.buf)].rv
}
