package informer

import (
	"sync"

	"github.com/kwatch/kwatch/watch"
)

// DefaultDecodeCache is Options.DecodeCache's default.
const DefaultDecodeCache = 1024

// decodeCache keeps the last decoded versions of a compact store's
// objects, keyed by the stored Raw itself: a new version is a new Raw, so
// an entry can never be stale. It holds at most its capacity of entries,
// evicting the oldest first. A nil cache keeps nothing.
type decodeCache[T any] struct {
	mu   sync.Mutex
	m    map[*watch.Raw]decoded[T] // guarded by mu
	ring []*watch.Raw              // guarded by mu; each key of m once, oldest at pos when full
	pos  int                       // guarded by mu
}

type decoded[T any] struct {
	obj T
	err error
}

// newDecodeCache returns a cache of n entries: DefaultDecodeCache for 0,
// nil (none) for a negative n.
func newDecodeCache[T any](n int) *decodeCache[T] {
	if n == 0 {
		n = DefaultDecodeCache
	}
	if n < 0 {
		return nil
	}
	return &decodeCache[T]{m: make(map[*watch.Raw]decoded[T], n), ring: make([]*watch.Raw, 0, n)}
}

func (c *decodeCache[T]) get(r *watch.Raw) (T, error, bool) {
	if c == nil {
		var zero T
		return zero, nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[r]
	return d.obj, d.err, ok
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
	if len(c.ring) < cap(c.ring) {
		c.ring = append(c.ring, r)
	} else {
		delete(c.m, c.ring[c.pos])
		c.ring[c.pos] = r
		c.pos = (c.pos + 1) % len(c.ring)
	}
	c.m[r] = decoded[T]{obj, err}
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
