package informer

import (
	"sync"

	"github.com/kwatch/kwatch/watch"
)

// DefaultDecodeCache is the fewest decoded objects a cache sized by use
// keeps (Options.DecodeCache 0), and about what a reconcile loop's Gets of
// recently changed objects need.
const DefaultDecodeCache = 1024

// decodeCache keeps decoded versions of a compact store's objects, keyed
// by the stored Raw itself: a new version is a new Raw, so an entry can
// never be stale, not even when a server restored from a backup reuses a
// resourceVersion with other content. The informer drops the entry of a
// version it replaces or deletes (drop) when no handler can still be
// given it, and otherwise makes it the next to go (demote); a relist's
// copy of an unchanged object takes over its entry (move).
//
// Eviction is CLOCK (second chance): a hit marks the entry, the hand
// clears marks and evicts the first unmarked entry, so what is read again
// stays and a one-off read goes first.
//
// Sizing by use (fixed false): the limit is at least floor and follows the
// largest batch (List, ByIndex, Snapshot) readers read: a batch of n raises
// it to n before decoding, so repeating it decodes nothing. Every read
// counts towards a window as long as the limit; at the window's end the
// limit falls back to the largest batch of that window (at least floor)
// and the excess is evicted. So a process that listed everything once,
// then only Gets, gives the memory back after about as many reads as it
// listed objects, a cost linear in the reads. A fixed cache keeps its
// limit. A nil cache keeps nothing.
type decodeCache[T any] struct {
	mu sync.Mutex
	// m maps each cached Raw to its slot in ring. Guarded by mu.
	m map[*watch.Raw]int
	// ring holds the entries; a slot with a nil raw is free and its index
	// is in free. Guarded by mu.
	ring []slot[T]
	free []int
	hand int // next slot the CLOCK hand looks at; guarded by mu

	floor int  // the limit's least value
	fixed bool // the limit never moves
	limit int  // most entries kept; guarded by mu
	reads int  // reads in the current window; guarded by mu
	peak  int  // largest batch of the current window; guarded by mu
}

type slot[T any] struct {
	raw *watch.Raw
	obj T
	err error
	ref bool // read since the hand last passed
}

// newDecodeCache returns the cache Options.DecodeCache asks for: sized by
// use from DefaultDecodeCache for 0, fixed at n for a positive n, nil
// (none) for a negative n.
func newDecodeCache[T any](n int) *decodeCache[T] {
	if n < 0 {
		return nil
	}
	c := &decodeCache[T]{floor: n, fixed: n > 0, m: map[*watch.Raw]int{}}
	if n == 0 {
		c.floor = DefaultDecodeCache
	}
	c.limit = c.floor
	return c
}

// get returns r's decoded object if cached, and marks it used.
func (c *decodeCache[T]) get(r *watch.Raw) (T, error, bool) {
	if c == nil {
		var zero T
		return zero, nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.readLocked(1)
	i, ok := c.m[r]
	if !ok {
		var zero T
		return zero, nil, false
	}
	c.ring[i].ref = true
	return c.ring[i].obj, c.ring[i].err, true
}

// batch tells the cache that a reader is about to read n objects at once:
// a cache sized by use makes room for all of them, so that the same read
// repeated finds them all.
func (c *decodeCache[T]) batch(n int) {
	if c == nil || c.fixed {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.peak = max(c.peak, n)
	c.limit = max(c.limit, n)
}

// readLocked counts n reads and ends the window when it is full.
func (c *decodeCache[T]) readLocked(n int) {
	if c.fixed {
		return
	}
	c.reads += n
	if c.reads < c.limit {
		return
	}
	c.limit = max(c.floor, c.peak)
	c.reads, c.peak = 0, 0
	for len(c.m) > c.limit {
		c.evictLocked()
	}
}

func (c *decodeCache[T]) put(r *watch.Raw, obj T, err error) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[r]; ok {
		return // another reader decoded it at the same time
	}
	for len(c.m) >= c.limit && len(c.m) > 0 {
		c.evictLocked()
	}
	if c.limit == 0 {
		return
	}
	s := slot[T]{raw: r, obj: obj, err: err}
	if n := len(c.free); n > 0 {
		i := c.free[n-1]
		c.free = c.free[:n-1]
		c.ring[i] = s
		c.m[r] = i
		return
	}
	c.ring = append(c.ring, s)
	c.m[r] = len(c.ring) - 1
}

// evictLocked removes one entry: the first unmarked one from the hand,
// clearing marks on the way. There is one when m is not empty, found
// within two turns of the ring.
func (c *decodeCache[T]) evictLocked() {
	for {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		s := &c.ring[c.hand]
		c.hand++
		switch {
		case s.raw == nil:
		case s.ref:
			s.ref = false
		default:
			c.removeLocked(c.hand - 1)
			return
		}
	}
}

// removeLocked frees slot i. When the live entries fill less than a
// quarter of the ring, the ring is rebuilt smaller, so that a cache that
// shrank does not keep its largest ring's memory.
func (c *decodeCache[T]) removeLocked(i int) {
	delete(c.m, c.ring[i].raw)
	c.ring[i] = slot[T]{}
	c.free = append(c.free, i)
	if len(c.ring) > 64 && len(c.m) < len(c.ring)/4 {
		c.repackLocked()
	}
}

func (c *decodeCache[T]) repackLocked() {
	ring := make([]slot[T], 0, 2*len(c.m))
	for _, s := range c.ring {
		if s.raw != nil {
			c.m[s.raw] = len(ring)
			ring = append(ring, s)
		}
	}
	c.ring, c.free, c.hand = ring, c.free[:0], 0
}

// drop removes r's entry: the informer replaced or deleted that version,
// and no reader can ask for it again through the store (a handler still
// being given it decodes it anew).
func (c *decodeCache[T]) drop(r *watch.Raw) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.m[r]; ok {
		c.removeLocked(i)
	}
}

// demote makes r's entry the next to go: its version left the store, but
// a handler may still be given it (as the old side of an update) and read
// it once more.
func (c *decodeCache[T]) demote(r *watch.Raw) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.m[r]; ok {
		c.ring[i].ref = false
	}
}

// move gives old's entry to cur, a Raw of the same bytes (a relist's copy
// of an unchanged object): the same bytes decode to the same object.
func (c *decodeCache[T]) move(old, cur *watch.Raw) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.m[old]
	if !ok {
		return
	}
	delete(c.m, old)
	if _, dup := c.m[cur]; dup {
		c.ring[i] = slot[T]{}
		c.free = append(c.free, i)
		return
	}
	c.ring[i].raw = cur
	c.m[cur] = i
}

// len is the number of entries.
func (c *decodeCache[T]) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
