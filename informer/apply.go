package informer

import (
	"errors"
	"fmt"
	"runtime/debug"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// The store's invariant: once it reports resourceVersion N, every object in
// it is the server's state at N, and every object the server had at N is in
// it unless the informer refused it. An object is refused when Transform
// returns an error for it or the store cannot key or index it; a refused
// object is absent, never a stale version. That is what a relist gives too
// (it drops refused objects the same way), so a watch and a relist agree.
//
// A refused ADDED or MODIFIED therefore removes the key's previous version,
// and handlers get OnDelete for it as for an object that left a selector; a
// DELETED removes its key whatever Transform says of it. Relisting instead
// would cost a full list per event of a bad object and end in the same
// state. Every refusal is counted in Stats, logged, and shown in Health.

// transform applies Options.Transform.
func (inf *Informer[T]) transform(obj T) (T, error) {
	if inf.opts.Transform == nil {
		return obj, nil
	}
	out, err := callTransform(inf.opts.Transform, obj)
	if err != nil {
		inf.stats.transformErrors.Add(1)
		return obj, fmt.Errorf("transform: %w", err)
	}
	return out, nil
}

// callTransform calls fn; its panic is a *store.PanicError, and the
// object is refused as on fn's error.
func callTransform[T any](fn func(T) (T, error), obj T) (out T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &store.PanicError{Func: "Transform", Value: r, Stack: debug.Stack()}
		}
	}()
	return fn(obj)
}

// managedFieldsSetter is implemented by every object with ObjectMeta.
type managedFieldsSetter interface {
	SetManagedFields([]metav1.ManagedFieldsEntry)
}

// dropManagedFields returns a Transform that clears managedFields, then
// applies next (if any).
func dropManagedFields[T watch.Object](next func(T) (T, error)) (func(T) (T, error), error) {
	var zero T
	if _, ok := any(zero).(managedFieldsSetter); !ok {
		return nil, fmt.Errorf("informer: DropManagedFields: %T has no SetManagedFields", zero)
	}
	return func(obj T) (T, error) {
		any(obj).(managedFieldsSetter).SetManagedFields(nil)
		if next != nil {
			return next(obj)
		}
		return obj, nil
	}, nil
}

// refused records an object the informer will not cache. It is called
// with distMu held, or while a list is built: the log waits in held (see
// heldLogs).
func (inf *Informer[T]) refused(obj T, what string, err error) {
	inf.stats.refused(err)
	args := []any{"resource", inf.opts.Resource.String(), "event", what,
		"namespace", obj.GetNamespace(), "name", obj.GetName(), "err", err}
	if p, ok := errors.AsType[*store.PanicError](err); ok {
		args = append(args, "stack", string(p.Stack))
	}
	inf.held.add("informer refused an object; it is not cached", args...)
}

// logHeld gives the Logger what was logged with distMu held. distMu must
// not be held.
func (inf *Informer[T]) logHeld() { inf.held.flush(inf.opts.Logger, inf.opts.Resource.String()) }

// apply writes one watch event to the store and queues its notifications.
// It returns the state with the RV the event carries.
func (inf *Informer[T]) apply(st state, ev watch.Event[T]) state {
	inf.stats.events.Add(1)
	rv := ev.Object.GetResourceVersion()
	inf.stats.touch(rv)
	if ev.Type == watch.Bookmark {
		if rv != "" {
			inf.store.SetResourceVersion(rv)
		}
		return afterBookmark(st, rv)
	}
	if rv != "" {
		st.rv = rv
	}
	key, changed := inf.applyLocking(ev, rv)
	inf.logHeld()
	if changed {
		inf.tellApplied(key)
	}
	return st
}

// applyLocking is apply's part under distMu: it returns the key the event
// changed, if any.
func (inf *Informer[T]) applyLocking(ev watch.Event[T], rv string) (key string, changed bool) {
	inf.distMu.Lock()
	defer inf.distMu.Unlock()
	switch ev.Type {
	case watch.Added, watch.Modified:
		return inf.upsertLocked(ev, rv)
	case watch.Deleted:
		return inf.deleteLocked(ev, rv)
	}
	return "", false
}

// upsertLocked stores an ADDED or MODIFIED object, or removes the key's
// previous version when the object is refused. It returns the key it
// changed, if any. distMu is held.
func (inf *Informer[T]) upsertLocked(ev watch.Event[T], rv string) (string, bool) {
	obj, err := inf.transform(ev.Object)
	if err == nil {
		var old T
		var existed bool
		if old, existed, err = inf.store.Upsert(obj, rv); err == nil {
			key, _ := inf.store.Key(obj) // Upsert computed it without error
			if existed && inf.replaced != nil {
				inf.replaced(old, obj, false)
			}
			for _, r := range inf.handlers {
				if existed {
					r.q.update(key, old, obj)
				} else {
					r.q.add(key, obj, false)
				}
			}
			return key, true
		}
		inf.stats.storeErrors.Add(1)
	}
	inf.refused(ev.Object, string(ev.Type), err)
	// The object still exists on the server: its removal here is inferred,
	// as a relist that drops it would report it (finalStateUnknown).
	return inf.removeLocked(ev.Object, obj, false, true, rv)
}

// deleteLocked removes a DELETED object's key and returns it, if it was
// stored. distMu is held.
func (inf *Informer[T]) deleteLocked(ev watch.Event[T], rv string) (string, bool) {
	obj, err := inf.transform(ev.Object)
	if err != nil {
		// The delete happened whatever Transform thinks of the final state:
		// find the key from the object as the server sent it.
		inf.refused(ev.Object, string(ev.Type), err)
	}
	return inf.removeLocked(ev.Object, obj, err == nil, false, rv)
}

// removeLocked removes the stored version of the object the server sent as
// raw (obj once transformed) and tells handlers. The key comes from obj,
// else from raw; when neither can be keyed, the store is searched for the
// object's namespace and name, so a key function that fails on one version
// of an object still leaves no earlier version behind. Handlers get obj as
// the final state when it was accepted (finalOK), else the last state they
// were given: never an object Transform refused. unknown is the delete's
// finalStateUnknown. A key that cannot be computed is counted and logged
// here, unless the event was refused (and so counted) already. It returns
// the key it removed, if any. distMu is held.
func (inf *Informer[T]) removeLocked(raw, obj T, finalOK, unknown bool, rv string) (string, bool) {
	key, err := inf.store.Key(obj)
	if err != nil {
		key, err = inf.store.Key(raw)
	}
	if err != nil {
		if finalOK {
			inf.stats.storeErrors.Add(1)
			inf.refused(raw, "key", err)
		}
		key = inf.keyByNameLocked(raw.GetNamespace(), raw.GetName())
		if key == "" {
			inf.store.SetResourceVersion(rv)
			return "", false
		}
	}
	if last, existed := inf.store.Delete(key, rv); existed {
		if inf.replaced != nil {
			inf.replaced(last, obj, true)
		}
		final := last
		if finalOK {
			final = obj
		}
		for _, r := range inf.handlers {
			r.q.remove(key, last, final, unknown)
		}
		return key, true
	}
	return "", false
}

// keyByNameLocked returns the key of the stored object with namespace and
// name, or "". It scans the store: it runs only when a key function failed.
func (inf *Informer[T]) keyByNameLocked(namespace, name string) string {
	for _, key := range inf.store.ListKeys() {
		if o, ok := inf.store.Get(key); ok && o.GetNamespace() == namespace && o.GetName() == name {
			return key
		}
	}
	return ""
}

// addListed puts one object of a list (paginated or streaming) into the
// store being built. An object the transform or the store refuses is
// counted and logged; the list goes on.
func (inf *Informer[T]) addListed(repl *store.Replacement[T], obj T) {
	inf.stats.listed.Add(1)
	out, err := inf.transform(obj)
	if err == nil {
		if err = repl.Add(out); err == nil {
			return
		}
		inf.stats.storeErrors.Add(1)
	}
	inf.refused(obj, "list", err)
}

// commit swaps a relisted store in and tells handlers what changed: adds
// for new keys, updates for changed objects, and deletes with
// finalStateUnknown for keys that vanished while the informer was not
// watching. An object counts as changed when its resourceVersion or its
// UID differs: a deleted and re-created object has a new UID. With
// distrust every object kept is reported as updated: a server restored to
// an older state reuses resourceVersions, so an object can come back with
// our RV and UID and other content. OnApplied hears of each key it
// changed once distMu is released.
func (inf *Informer[T]) commit(repl *store.Replacement[T], rv string, distrust bool) {
	applied := func() []string {
		inf.distMu.Lock()
		defer inf.distMu.Unlock()
		return inf.commitLocked(repl, rv, distrust)
	}()
	inf.logHeld()
	inf.tellApplied(applied...)
}

// commitLocked is commit under distMu; it returns the keys it changed
// when there is an OnApplied to tell.
func (inf *Informer[T]) commitLocked(repl *store.Replacement[T], rv string, distrust bool) (applied []string) {
	initial := !inf.synced.Load()
	old := inf.store.Commit(repl, rv)
	inf.filled = true
	inf.stats.relists.Add(1)
	inf.stats.touch(rv)
	inf.stats.recovered()
	if len(old) == 0 { // every object is new (the first list, say): added in batches
		keys, objs := inf.store.Items()
		for _, r := range inf.handlers {
			r.q.addAll(keys, objs, initial)
		}
		inf.markSyncedLocked()
		if inf.opts.OnApplied == nil {
			return nil
		}
		return keys
	}
	for _, obj := range inf.store.List() {
		key, err := inf.store.Key(obj)
		if err != nil {
			continue
		}
		prev, had := old[key]
		delete(old, key)
		if had && inf.replaced != nil {
			inf.replaced(prev, obj, false)
		}
		update := had && (distrust || changed(prev, obj))
		if !had || update {
			applied = inf.collectApplied(applied, key)
		}
		for _, r := range inf.handlers {
			switch {
			case !had:
				r.q.add(key, obj, initial)
			case update:
				r.q.relistUpdate(key, prev, obj)
			}
		}
	}
	for key, prev := range old {
		if inf.replaced != nil {
			inf.replaced(prev, prev, true)
		}
		applied = inf.collectApplied(applied, key)
		for _, r := range inf.handlers {
			r.q.remove(key, prev, prev, true)
		}
	}
	inf.markSyncedLocked()
	return applied
}

// collectApplied adds key, a change the store holds, to the keys for
// tellApplied, when there is an OnApplied to tell.
func (inf *Informer[T]) collectApplied(keys []string, key string) []string {
	if inf.opts.OnApplied == nil {
		return keys
	}
	return append(keys, key)
}

// tellApplied calls Options.OnApplied for changes the store holds, in
// their order. distMu must not be held: OnApplied takes its caller's locks
// (the manager's expectations), and one of their holders may be waiting
// for distMu (a metrics scrape reading Stats, say).
func (inf *Informer[T]) tellApplied(keys ...string) {
	if inf.opts.OnApplied == nil {
		return
	}
	for _, k := range keys {
		inf.callOnApplied(k)
	}
}

// callOnApplied makes one call of OnApplied. It is the user's code on the
// watch's goroutine: a panic is logged and counted with the handlers'
// (Stats.HandlerPanics), and the watch goes on with the next change, as
// it does past a panicking handler.
func (inf *Informer[T]) callOnApplied(key string) {
	defer func() {
		if r := recover(); r != nil {
			inf.stats.appliedPanics.Add(1)
			inf.opts.Logger.Error("informer OnApplied panicked", "resource", inf.opts.Resource.String(),
				"key", key, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	inf.opts.OnApplied(key)
}

// uidObject is implemented by every object with ObjectMeta.
type uidObject interface{ GetUID() types.UID }

// changed reports whether cur is another version of the object than prev.
func changed[T watch.Object](prev, cur T) bool {
	if prev.GetResourceVersion() != cur.GetResourceVersion() {
		return true
	}
	p, ok1 := any(prev).(uidObject)
	c, ok2 := any(cur).(uidObject)
	return ok1 && ok2 && p.GetUID() != c.GetUID()
}
