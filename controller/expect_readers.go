package controller

import (
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"
)

// The reads of a cache that is not among a write's caches (expect.go):
// one out of the write's scope that is still to see another writer's
// version of the object come into it, or one built after the write. Keys
// do not wait on such a cache: no event of the object may ever show it
// the write. A read from it waits only while the cache holds the object
// below the write's version, or the incarnation the write deleted: a Get
// would return an object older than this process's write. So a write is
// kept for reads, once its caches show it, for as long as a cache of its
// resource that may hold the object (by the namespace and name its scope
// allows) has not passed its version: every cache whose watch runs does
// within a bookmark interval. A delete's version is the one its answer
// showed, or that of the write it replaced, the higher (keepRV); a
// delete answered with a Status of an object this process had not
// written has none, and gives a cache holding no incarnation nothing to
// compare with. Reader.Get then compares the object it read with the
// write waitShown looked at (readOlder): the cache may have come to hold
// an older version between the two. A cache of the resource that never
// moves on (its list refused) keeps the writes of the objects it may hold
// until it does, as a stopped holder does: one entry per object.

// keptForReadsLocked reports whether a cache of w's resource may still
// give a read an object older than w: one that may hold the object and
// has not passed w's version (a delete's keepRV). Expects e.mu held (or w
// not yet in e's maps).
func (e *expectations) keptForReadsLocked(w *pendingWrite) bool {
	rv := w.readRV()
	if rv == 0 || w.uncertain != nil || e.cachesOf == nil {
		return false
	}
	for _, c := range e.cachesOf(w.ref.res) {
		// By versions, not by shows: a cache on a floor shows w once the
		// object is gone from it, but another writer may bring it back
		// there below w's version.
		if c.mayHold(w.ref.key) && !c.passed(rv, c.state(w.ref.key, false)) {
			return true
		}
	}
	return false
}

// readRV is the version below which a read must not return the object:
// w's own, or for a delete the one it keeps (keepRV); 0 for none.
func (w *pendingWrite) readRV() uint64 {
	if w.deleted {
		return w.keepRV
	}
	return w.rv
}

// stale reports whether st, what a cache holds of w's object, is older
// than w: below its read version, or the incarnation w deleted (neither
// gone nor going). An object whose version is not a decimal number (0)
// cannot be compared.
func (w *pendingWrite) stale(st objState) bool {
	if !st.present {
		return false
	}
	if rv := w.readRV(); rv > 0 && st.rv > 0 && st.rv < rv {
		return true
	}
	return w.deleted && st.uid != "" && (st.uid == w.uid || slices.Contains(w.gone, st.uid)) && !st.deleting
}

// goneWith is the gone of a delete of uid that replaces w: w's own, and,
// when w is a delete of another incarnation, w's uid. (A write that is
// not a delete may have come after the delete, whose Status answer has
// no version to tell: its incarnation may be the one there now.)
func (w *pendingWrite) goneWith(uid string) []string {
	gone := slices.Clone(w.gone)
	if w.deleted && w.uid != "" && w.uid != uid && !slices.Contains(gone, w.uid) {
		gone = append(gone, w.uid)
	}
	return gone
}

// readDone reports whether a read from c need not wait for w: c holds
// nothing older than w, and, when it is one of w's caches, shows w. A
// cache past w's read version holds the object as it is since, whatever
// its version.
func (c *cacheEntry) readDone(w *pendingWrite) bool {
	st := c.state(w.ref.key, w.deleted)
	if rv := w.readRV(); rv > 0 && c.reachedRV(rv) {
		st.rv = 0 // nothing to compare: only the uid counts
	}
	if w.stale(st) {
		return false
	}
	return !w.waitsFor(c) || c.shows(w)
}

// readOlder reports whether obj, read from a cache after waitShown
// returned seen (the write it last looked at, nil for none), is older
// than that write: the cache came to hold it after waitShown looked, and
// the read must look again. A write of unknown outcome has no version to
// compare with. It takes no lock: what it reads of seen does not change.
func readOlder(seen *pendingWrite, obj any) bool {
	if seen == nil || seen.uncertain != nil {
		return false
	}
	return seen.stale(objStateOf(obj))
}

// objStateOf is what obj, an object read from a cache, is to
// pendingWrite.stale.
func objStateOf(obj any) objState {
	st := objState{present: true}
	if o, ok := obj.(interface{ GetResourceVersion() string }); ok {
		st.rv, _ = strconv.ParseUint(o.GetResourceVersion(), 10, 64)
	}
	if u, ok := obj.(uider); ok {
		st.uid = string(u.GetUID())
	}
	if d, ok := obj.(deletionTimed); ok && d.GetDeletionTimestamp() != nil {
		st.deleting = true
	}
	return st
}

// mayHold reports whether c's scope allows the object at key, by its
// namespace and name: a label selector may come to match any object.
func (c *cacheEntry) mayHold(key string) bool {
	ns, name, found := strings.Cut(key, "/")
	if !found {
		ns, name = "", key // cluster-scoped: every scope's namespace allows it
	}
	sc := c.scope
	if sc.Namespace != "" && ns != "" && sc.Namespace != ns {
		return false
	}
	if sc.FieldSelector == "" {
		return true
	}
	sel, err := fields.ParseSelector(sc.FieldSelector)
	if err != nil {
		return false // such a cache lists nothing
	}
	set := map[string]string{"metadata.name": name, "metadata.namespace": ns}
	for _, r := range sel.Requirements() {
		v, known := set[r.Field]
		if !known {
			continue
		}
		switch r.Operator {
		case selection.Equals, selection.DoubleEquals:
			if v != r.Value {
				return false
			}
		case selection.NotEquals:
			if v == r.Value {
				return false
			}
		}
	}
	return true
}
