package informer

import (
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// transform applies Options.Transform; false drops the object.
func (inf *Informer[T]) transform(obj T) (T, bool) {
	if inf.opts.Transform == nil {
		return obj, true
	}
	out, err := inf.opts.Transform(obj)
	if err != nil {
		inf.stats.transformErrors.Add(1)
		inf.opts.Logger.Error("informer transform failed; object not cached",
			"resource", inf.opts.Resource.String(), "namespace", obj.GetNamespace(), "name", obj.GetName(), "err", err)
		return obj, false
	}
	return out, true
}

// apply writes one watch event to the store and queues its notifications.
// It returns the state with the RV the event carries.
func (inf *Informer[T]) apply(st state, ev watch.Event[T]) state {
	inf.stats.events.Add(1)
	rv := ev.Object.GetResourceVersion()
	inf.stats.touch(rv)
	if ev.Type == watch.Bookmark {
		inf.store.SetResourceVersion(rv)
		return afterBookmark(st, rv)
	}
	obj, ok := inf.transform(ev.Object)
	if rv != "" {
		st.rv = rv
	}
	if !ok {
		return st
	}
	inf.distMu.Lock()
	defer inf.distMu.Unlock()
	switch ev.Type {
	case watch.Added, watch.Modified:
		old, existed, err := inf.store.Upsert(obj, rv)
		if err != nil {
			inf.stats.storeErrors.Add(1)
			inf.opts.Logger.Error("informer could not store object", "resource", inf.opts.Resource.String(),
				"namespace", obj.GetNamespace(), "name", obj.GetName(), "err", err)
			return st
		}
		key, _ := inf.store.Key(obj)
		for _, r := range inf.handlers {
			if existed {
				r.q.update(key, old, obj)
			} else {
				r.q.add(key, obj, false)
			}
		}
	case watch.Deleted:
		key, err := inf.store.Key(obj)
		if err != nil {
			inf.stats.storeErrors.Add(1)
			return st
		}
		if last, existed := inf.store.Delete(key, rv); existed {
			for _, r := range inf.handlers {
				r.q.remove(key, last, obj, false)
			}
		}
	}
	return st
}

// commit swaps a relisted store in and tells handlers what changed: adds
// for new keys, updates for changed RVs, and deletes with
// finalStateUnknown for keys that vanished while the informer was not
// watching.
func (inf *Informer[T]) commit(repl *store.Replacement[T], rv string) {
	inf.distMu.Lock()
	defer inf.distMu.Unlock()
	initial := !inf.synced.Load()
	old := inf.store.Commit(repl, rv)
	inf.stats.relists.Add(1)
	inf.stats.touch(rv)
	inf.stats.recovered()
	for _, obj := range inf.store.List() {
		key, err := inf.store.Key(obj)
		if err != nil {
			continue
		}
		prev, had := old[key]
		delete(old, key)
		for _, r := range inf.handlers {
			switch {
			case !had:
				r.q.add(key, obj, initial)
			case prev.GetResourceVersion() != obj.GetResourceVersion():
				r.q.update(key, prev, obj)
			}
		}
	}
	for key, prev := range old {
		for _, r := range inf.handlers {
			r.q.remove(key, prev, prev, true)
		}
	}
	inf.markSyncedLocked()
}
