package controller

import (
	"context"
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
// write of the object would wait for a bookmark or the bound. A cache
// that holds another incarnation of the object (another actor deleted it
// and made it again) is not one of these: it is still to see this one
// come, in its scope, so its going says nothing; it shows w at w's
// resourceVersion only, which the event of the object leaving carries.
func (w *pendingWrite) leaving(wr kube.Written, holders []*cacheEntry) {
	if w.deleted {
		return
	}
	for _, c := range holders {
		if _, ok := w.floor(c); ok || c.takes(wr) {
			continue
		}
		if st := c.state(w.ref.key, false); w.uid != "" && st.uid != "" && st.uid != w.uid {
			continue
		}
		w.floors = append(w.floors, floor{c: c})
	}
}

// deletedAt makes each of holders show w, a delete whose answer showed
// the object at delRV, only once it has reached delRV: a cache behind it
// may hold an incarnation the delete came after (another actor deleted
// the object and made it again), whose other uid or absence says nothing
// of this delete, or be yet to see the deleted object come.
func (w *pendingWrite) deletedAt(holders []*cacheEntry) {
	if !w.deleted || w.delRV == 0 {
		return
	}
	for _, c := range holders {
		w.raiseFloor(c, w.delRV)
	}
}

// raiseFloor makes c show w only once it has reached rv, or a higher
// version its floor already names.
func (w *pendingWrite) raiseFloor(c *cacheEntry, rv uint64) {
	i := slices.IndexFunc(w.floors, func(f floor) bool { return f.c == c })
	if i < 0 {
		w.floors = append(w.floors, floor{c, rv})
	} else {
		w.floors[i].rv = max(w.floors[i].rv, rv)
	}
}

// supersedes reports whether w, recorded earlier, is a later version of
// the object than x: two workers' writes of one object may be recorded in
// the other order than the server answered them. A delete whose answer
// showed the object at delRV came after every write at or below delRV,
// and before every write above it: of the same uid, nothing is written
// after an object's last version; of another, the two incarnations did
// not live at once. A delete answered with a Status (no version) is taken
// as the later write, as is the later recorded of two such.
func (w *pendingWrite) supersedes(x *pendingWrite) bool {
	switch {
	case !w.deleted && !x.deleted:
		return w.rv > x.rv
	case !w.deleted:
		return x.delRV > 0 && w.rv > x.delRV
	case !x.deleted:
		return w.delRV > 0 && w.delRV >= x.rv
	default:
		return x.delRV > 0 && w.delRV > x.delRV
	}
}

// statusDeleteFloors makes the holders that hold another incarnation of
// the object than pw, a delete answered with a Status (which names the
// uid but no version), show pw only once they have passed the server's
// resourceVersion read now: such a cache is behind another actor's
// delete and re-create, and may be yet to see the deleted incarnation
// come and go; the delete is at or below what the server shows after its
// answer. The read is made only then, in the writer's call; without an
// answer those caches show pw as before, by not holding its uid.
func (e *expectations) statusDeleteFloors(ctx context.Context, w kube.Written, pw *pendingWrite, holders []*cacheEntry) {
	if !pw.deleted || pw.delRV != 0 || pw.uid == "" || e.serverRV == nil {
		return
	}
	var behind []*cacheEntry
	for _, c := range holders {
		if st := c.state(pw.ref.key, false); st.present && st.uid != "" && st.uid != pw.uid {
			behind = append(behind, c)
		}
	}
	if len(behind) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, serverRVTimeout)
	defer cancel()
	rv, err := e.serverRV(rctx, w.Resource, w.Namespace)
	if err != nil {
		e.log.Warn("could not read the server's resourceVersion after a delete a cache is behind; reads of it may return the older incarnation it holds",
			"object", pw.ref.String(), "error", err)
		return
	}
	for _, c := range behind {
		pw.raiseFloor(c, rv)
	}
}
