package controller

import (
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"
)

// The reads of a cache that is not among a write's caches (expect.go):
// one out of the write's scope that is still to see another writer's
// version of the object come into it, or one built after the write. Keys
// do not wait on such a cache: no event of the object may ever show it
// the write. A read from it waits only when the cache holds the object
// at a version older than the write, or the incarnation the write
// deleted: a Get would return an object older than this process's write.
// So a write that is not a delete is kept for reads, once its caches show
// it, for as long as a cache of its resource that may hold the object (by
// the namespace and name its scope allows) does not show it: every cache
// whose watch runs passes the write's resourceVersion within a bookmark
// interval. A delete is kept as before: a cache that holds no incarnation
// of the object gives nothing to compare with.

// keptForReadsLocked reports whether a cache of w's resource may still
// give a read an object older than w: one that may hold the object and
// does not show w. Expects e.mu held (or w not yet in e's maps).
func (e *expectations) keptForReadsLocked(w *pendingWrite) bool {
	if w.deleted || w.uncertain != nil || e.allCaches == nil {
		return false
	}
	for _, c := range e.allCaches() {
		if c.res == w.ref.res && c.mayHold(w.ref.key) && !c.shows(w) {
			return true
		}
	}
	return false
}

// readWaits reports whether a read from c, which does not show w, must
// wait for it: c is one of w's caches, or holds what w replaced.
func (c *cacheEntry) readWaits(w *pendingWrite) bool {
	if w.waitsFor(c) {
		return true
	}
	if w.deleted {
		// Not showing the delete, c holds the object with w's uid (none
		// named: any incarnation, which says nothing).
		return w.uid != ""
	}
	return c.state(w.ref.key, false).present // at a version below w's
}

// olderThan reports whether an object read at resourceVersion rv with
// uid is older than w: below its version, or the incarnation it deleted.
func (w *pendingWrite) olderThan(rv, uid string) bool {
	if w.deleted {
		return w.uid != "" && uid == w.uid
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	return err == nil && n < w.rv
}

// readOlder reports whether obj, just read from c at key, is older than
// this process's kept write of it that c does not show: the cache came to
// hold it after waitShown looked.
func (e *expectations) readOlder(c *cacheEntry, key string, obj any) bool {
	if e == nil || e.timeout <= 0 {
		return false
	}
	o, ok := obj.(interface{ GetResourceVersion() string })
	if !ok {
		return false
	}
	var uid string
	if u, ok := obj.(uider); ok {
		uid = string(u.GetUID())
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	w := e.objects[objRef{c.res, key}]
	return w != nil && w.uncertain == nil && !c.shows(w) && w.olderThan(o.GetResourceVersion(), uid)
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
