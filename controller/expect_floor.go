package controller

import (
	"context"
	"slices"
	"strconv"

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
	if w.deleted && w.uid == "" && !prev.deleted && len(prev.caches) > 0 {
		// Of a write some cache has not shown yet: the incarnation it
		// wrote is the one deleted. (One only kept for reads may be gone
		// and made again by another actor since.)
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
		w.floors = append(w.floors, floor{c: c, rv: prev.needs(c)})
	}
	return holders
}

// floor is a cache that must reach rv before it can show a write.
type floor struct {
	c  *cacheEntry
	rv uint64
	// lifts: rv falls to 0 once c is seen holding the deleted uid
	// (statusDeleteFloors).
	lifts bool
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
		w.floors = append(w.floors, floor{c: c, rv: rv})
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

// A delete answered with a Status names the uid but no version, so how
// far a cache must get to show it is unknown: the server's
// resourceVersion is read after the answer, in the writer's call (the
// delete is at or below it), and is the delete's read version
// (pendingWrite.keepRV): a read does not return the object from a cache
// below it, as a cache behind the delete may be yet to see the deleted
// incarnation come, and one past it holds the truth. A holder that holds
// another incarnation of the object is behind another actor's delete and
// re-create: it shows the delete only once it has passed that version,
// or once it has been seen holding the deleted uid (a later event of the
// object, as the holder's events come in order) and then not; the same
// for every holder when the Status names no uid and the holders hold
// different ones, which went being unknown. Without an answer the
// holders show the delete as before, by not holding its uid, and reads
// have no version to compare with.

// statusDeleteBehind returns the server's resourceVersion read after w,
// a delete answered with a Status, and the holders that are behind it by
// the above; nothing when w is no such delete, or the read failed.
func (e *expectations) statusDeleteBehind(ctx context.Context, w kube.Written, holders []*cacheEntry) ([]*cacheEntry, uint64) {
	if !w.Deleted || e.serverRV == nil {
		return nil, 0
	}
	if _, err := strconv.ParseUint(w.ResourceVersion, 10, 64); err == nil {
		return nil, 0 // the answer showed the object's version (deletedAt)
	}
	key := storeKey(w.Namespace, w.Name)
	var behind []*cacheEntry
	uids := map[string]bool{}
	prev := e.latest(objRef{resKeyOf(w.Resource), key})
	if w.UID == "" && prev != nil && prev.uid != "" {
		// The uid is to be guessed: this process's earlier write of the
		// object is one candidate (afterUnshown takes its uid), the
		// holders' the others.
		uids[prev.uid] = true
	}
	for _, c := range holders {
		st := c.state(key, false)
		if !st.present || st.uid == "" {
			continue
		}
		uids[st.uid] = true
		if w.UID != "" && st.uid != w.UID {
			behind = append(behind, c)
		}
	}
	if w.UID == "" && len(uids) > 1 {
		behind = holders // which incarnation went is unknown
	}
	rctx, cancel := context.WithTimeout(ctx, serverRVTimeout)
	defer cancel()
	rv, err := e.serverRV(rctx, w.Resource, w.Namespace)
	if err != nil {
		e.log.Warn("could not read the server's resourceVersion after a delete answered with a Status; reads of the object may return an incarnation it deleted",
			"object", objRef{resKeyOf(w.Resource), key}.String(), "error", err)
		return nil, 0
	}
	return behind, rv
}

// statusDeleteFloors raises the floors of behind, caches that are behind
// w's delete, to rv; a floor made here lifts once the cache is seen
// holding w's uid, when the answer named it (named): a guessed one may
// be the incarnation the cache is behind with.
func (w *pendingWrite) statusDeleteFloors(behind []*cacheEntry, rv uint64, named bool) {
	for _, c := range behind {
		if _, ok := w.floor(c); ok {
			w.raiseFloor(c, rv)
			continue
		}
		w.floors = append(w.floors, floor{c: c, rv: rv, lifts: named})
	}
}

// liftFloors drops the lifting floors of the caches that now hold w's
// uid: they have seen the deleted incarnation come, so its going shows
// the delete. Expects expectations.mu held.
func (w *pendingWrite) liftFloors() {
	for i, f := range w.floors {
		if f.lifts && f.rv != 0 && w.uid != "" && f.c.state(w.ref.key, false).uid == w.uid {
			w.floors[i].rv = 0
		}
	}
}

// latest is this process's latest write of ref kept in e.objects, or nil.
func (e *expectations) latest(ref objRef) *pendingWrite {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.objects[ref]
}
