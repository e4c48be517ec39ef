package controller

import (
	"slices"

	"github.com/kwatch/kwatch/kube"
)

// afterUnshown makes w follow this process's earlier write of its object
// that some caches have not shown yet (a create, then its delete, or an
// update that takes it out of a cache's scope): the object is still to
// come to those caches, so w waits on them too, though they do not hold
// it yet, and they show w only once they passed the earlier write (see
// pendingWrite.floors). It returns holders with those caches added.
func (e *expectations) afterUnshown(w *pendingWrite, holders []*cacheEntry) []*cacheEntry {
	e.mu.Lock()
	defer e.mu.Unlock()
	prev := e.objects[w.ref]
	if prev == nil {
		return holders
	}
	if w.deleted && w.uid == "" && !prev.deleted {
		w.uid = prev.uid
	}
	for _, c := range prev.caches {
		held := slices.Contains(holders, c)
		if held && !w.deleted {
			continue // w's scope takes it: it shows w at w's resourceVersion
		}
		if !held {
			holders = append(holders, c)
		}
		w.floors = append(w.floors, floor{c, prev.needs(c)})
	}
	return holders
}

// floor is a cache that must reach rv before it can show a write.
type floor struct {
	c  *cacheEntry
	rv uint64
}

// floor is what c must reach before it can show w, and whether c is one
// of w's floors.
func (w *pendingWrite) floor(c *cacheEntry) (uint64, bool) {
	for _, f := range w.floors {
		if f.c == c {
			return f.rv, true
		}
	}
	return 0, false
}

// needs is what c, one of w's caches, must reach to show w before any
// later write: w's resourceVersion, or its floor.
func (w *pendingWrite) needs(c *cacheEntry) uint64 {
	if f, ok := w.floor(c); ok || w.deleted {
		return f
	}
	return w.rv
}

// leaving marks the caches among holders that hold the object now but
// that w, not a delete, takes it out of: they show w once the object is
// gone from them. They also show it at w's resourceVersion, but may never
// reach it: after the object left they get no event of it, and a later
// write of the object would wait for a bookmark or the bound.
func (w *pendingWrite) leaving(wr kube.Written, holders []*cacheEntry) {
	if w.deleted {
		return
	}
	for _, c := range holders {
		if _, ok := w.floor(c); !ok && !c.takes(wr) {
			w.floors = append(w.floors, floor{c: c})
		}
	}
}

// supersedes reports whether w, recorded earlier, is a later version of
// the object than x: two workers' writes of one object may be recorded in
// the other order than the server answered them.
func (w *pendingWrite) supersedes(x *pendingWrite) bool {
	return !w.deleted && !x.deleted && w.rv > x.rv
}
