package controller

import (
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// objState is what one cache holds of one object.
type objState struct {
	present  bool
	rv       uint64 // 0 when not a decimal number
	uid      string
	deleting bool // it has a deletionTimestamp (asked for deletes only)
}

// shows reports whether the cache has applied w: see expect.go.
func (c *cacheEntry) shows(w *pendingWrite) bool {
	if !w.deleted {
		if c.reachedRV(w.rv) {
			return true // events come in resourceVersion order: everything up to rv is applied
		}
		st := c.state(w.ref.key, false)
		if st.present && st.rv >= w.rv {
			return true
		}
		// A cache the write took the object out of before it arrived
		// shows w once it has shown the object come and go.
		f, ok := w.floor(c)
		return ok && !st.present && c.passed(f, st)
	}
	f, _ := w.floor(c)
	if w.after > 0 && c.reachedRV(max(w.after, f)) {
		return true // past the server's version after the delete, and its floor
	}
	st := c.state(w.ref.key, true)
	if !c.passed(f, st) {
		return false // it has not shown the earlier write yet: the object is still to come
	}
	// A cache of a type without a uid says nothing of incarnations: it
	// shows the delete once the object is gone.
	return !st.present || (w.uid != "" && st.uid != "" && st.uid != w.uid && !slices.Contains(w.gone, st.uid)) || st.deleting
}

// passed reports whether the cache has applied resourceVersion rv (0:
// nothing to pass), st being what it holds of the object.
func (c *cacheEntry) passed(rv uint64, st objState) bool {
	if rv == 0 || c.reachedRV(rv) {
		return true
	}
	return st.present && st.rv >= rv
}

// reachedRV reports whether the cache's store has applied resourceVersion
// rv.
func (c *cacheEntry) reachedRV(rv uint64) bool {
	srv, err := strconv.ParseUint(c.storeRV(), 10, 64)
	return err == nil && srv >= rv
}

// reached reports whether the cache's store has applied resourceVersion
// rv; an rv that is not a decimal number counts as reached (nothing can
// be waited for).
func (c *cacheEntry) reached(rv string) bool {
	want, err := strconv.ParseUint(rv, 10, 64)
	return err != nil || c.reachedRV(want)
}

type uider interface{ GetUID() types.UID }

type deletionTimed interface{ GetDeletionTimestamp() *metav1.Time }

// stateFunc reads what inf holds of an object: in StoreCompact, and in a
// typed store of *watch.Raw, from the records alone, never decoding T (a
// deletionTimestamp is read from the metadata); from the typed store
// otherwise. It runs with the
// expectations' mutex held, so it must not reach the user's code: a
// decode into T that fails is logged to the manager's Logger.
func stateFunc[T watch.Object](inf *informer.Informer[T]) func(key string, deleting bool) objState {
	if inf.StoreMode() == informer.StoreCompact {
		// Its records are the store: a miss is an absent object (the
		// decoding Store() would find the object applied since, and decode it).
		return func(key string, deleting bool) objState { return rawState(inf.RawStore(), key, deleting) }
	}
	if raw, ok := any(inf.Store()).(store.View[*watch.Raw]); ok {
		// A typed store of records (T is *watch.Raw): its metadata is read
		// as a compact store's.
		return func(key string, deleting bool) objState { return rawState(raw, key, deleting) }
	}
	return func(key string, deleting bool) objState {
		var st objState
		obj, ok := inf.Store().Get(key)
		if !ok {
			return st
		}
		st.present = true
		st.rv, _ = strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
		if u, ok := any(obj).(uider); ok {
			st.uid = string(u.GetUID())
		}
		if d, ok := any(obj).(deletionTimed); ok && deleting && d.GetDeletionTimestamp() != nil {
			st.deleting = true
		}
		return st
	}
}

// rawState is what a compact store holds of key, read from its record
// alone.
func rawState(raw store.View[*watch.Raw], key string, deleting bool) objState {
	r, ok := raw.Get(key)
	if !ok {
		return objState{}
	}
	st := objState{present: true, uid: string(r.GetUID())}
	st.rv, _ = strconv.ParseUint(r.GetResourceVersion(), 10, 64)
	if deleting {
		m, err := r.Meta()
		st.deleting = err == nil && m.DeletionTimestamp != nil
	}
	return st
}

// holders are the manager's caches that hold the object w wrote: those of
// its resource whose scope takes it, and those that hold it now (which
// must show it leave). A delete waits only on the caches that hold the
// object now. A field selector is evaluated on
// metadata.name and metadata.namespace; a cache selecting on another
// field is not waited on, since the write's answer cannot tell whether
// that cache will ever see the object.
func (m *Manager) holders(w kube.Written) []*cacheEntry {
	rk := resKeyOf(w.Resource)
	key := storeKey(w.Namespace, w.Name)
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*cacheEntry
	for _, c := range m.caches {
		if c.res != rk {
			continue
		}
		if w.Deleted {
			// A cache that has not reached the version the answer showed
			// may be yet to see the object come (pendingWrite.deletedAt).
			if c.state(key, false).present || (c.takes(w) && !c.reached(w.ResourceVersion)) {
				out = append(out, c)
			}
			continue
		}
		// A cache the write moves the object out of must show it gone:
		// it holds the old version until then.
		if c.takes(w) || c.state(key, false).present {
			out = append(out, c)
		}
	}
	return out
}

// takes reports whether c, by its scope, holds the object w wrote.
func (c *cacheEntry) takes(w kube.Written) bool {
	sc := c.scope
	// A cluster-scoped object has no namespace, and a cache of its
	// resource holds it whatever the scope's namespace (the namespace does
	// not apply to the resource's path).
	if sc.Namespace != "" && w.Namespace != "" && sc.Namespace != w.Namespace {
		return false
	}
	if sc.LabelSelector != "" {
		sel, err := labels.Parse(sc.LabelSelector)
		if err != nil || !sel.Matches(labels.Set(w.Labels)) {
			return false
		}
	}
	if sc.FieldSelector != "" {
		sel, err := fields.ParseSelector(sc.FieldSelector)
		if err != nil {
			return false
		}
		for _, r := range sel.Requirements() {
			if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
				return false
			}
		}
		if !sel.Matches(fields.Set{"metadata.name": w.Name, "metadata.namespace": w.Namespace}) {
			return false
		}
	}
	return true
}
