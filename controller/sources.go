package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/queue"
	"github.com/kwatch/kwatch/watch"
)

// Source feeds a controller's queue from a watched resource: its primary
// resource (Config.For), the objects it owns (Owns), or any other through
// a mapping (Watches). Sources share the manager's informers.
type Source interface {
	// start registers the source's handler on its informer: enqueue gets
	// the keys of the primary objects to reconcile, at low priority for
	// the informer's initial list and resyncs, at normal priority for
	// changes (see changePriority). synced reports when the informer has
	// synced.
	start(m *Manager, primary kube.Resource, enqueue enqueueFunc) (synced func(context.Context) bool, err error)
	String() string
}

// ownerer is an object with owner references (metav1.ObjectMeta gives it).
type ownerer interface {
	GetOwnerReferences() []metav1.OwnerReference
}

// Owns watches objects of res owned by the controller's primary kind:
// every change of one enqueues the key of its controlling owner (the
// ownerReference with controller: true of the primary's kind and group),
// read from the object itself, so a change is never lost when the owner
// is not in the cache yet. An update that moves an object to another
// owner enqueues both. T must have GetOwnerReferences (metav1.ObjectMeta
// gives it).
func Owns[T watch.Object](res kube.TypedResource[T], preds ...Predicate[T]) Source {
	return &source[T]{res: res.Resource(), preds: preds, owned: true}
}

// OwnsIn is Owns for the objects of res in scope.
func OwnsIn[T watch.Object](res kube.TypedResource[T], scope kube.Scope, preds ...Predicate[T]) Source {
	return &source[T]{res: res.Resource(), scope: scope, preds: preds, owned: true}
}

// Watches watches objects of res and enqueues the keys mapFn returns for
// each change (old and new object both mapped on an update).
func Watches[T watch.Object](res kube.TypedResource[T], mapFn func(T) []Key, preds ...Predicate[T]) Source {
	return &source[T]{res: res.Resource(), preds: preds, mapFn: mapFn}
}

// WatchesIn is Watches for the objects of res in scope.
func WatchesIn[T watch.Object](res kube.TypedResource[T], scope kube.Scope, mapFn func(T) []Key, preds ...Predicate[T]) Source {
	return &source[T]{res: res.Resource(), scope: scope, preds: preds, mapFn: mapFn}
}

// forSources are the sources of a controller's own objects: its For
// resource in each of scopes (ForScope, or the scopes sharding divides
// it into; see wrapping).
func forSources[P watch.Object](cfg Config[P], scopes []kube.Scope) []Source {
	out := make([]Source, len(scopes))
	for i, sc := range scopes {
		out[i] = forSource(cfg.For, sc, cfg.Predicates)
	}
	return out
}

// forSource is the controller's primary resource: a change enqueues the
// object's own key.
func forSource[T watch.Object](res kube.TypedResource[T], scope kube.Scope, preds []Predicate[T]) *source[T] {
	return &source[T]{res: res.Resource(), scope: scope, preds: preds, primary: true,
		mapFn: func(obj T) []Key { return []Key{KeyOf(obj)} }}
}

type source[T watch.Object] struct {
	res   kube.Resource // zero when the source was given the zero TypedResource
	scope kube.Scope
	preds []Predicate[T]
	mapFn func(T) []Key // nil for an owned source
	owned bool
	// primary: the For source, whose keys are its objects' own.
	primary bool
}

func (s *source[T]) String() string {
	switch {
	case s.owned:
		return "owns " + s.res.String()
	case s.mapFn != nil:
		return "watches " + s.res.String()
	}
	return s.res.String()
}

func (s *source[T]) start(m *Manager, primary kube.Resource, enqueue enqueueFunc) (func(context.Context) bool, error) {
	if s.res.Resource == "" {
		return nil, errors.New("the zero kube.TypedResource")
	}
	if s.owned {
		var zero T
		if _, ok := any(zero).(ownerer); !ok {
			return nil, fmt.Errorf("controller: Owns(%s): %T has no GetOwnerReferences", s.res, zero)
		}
		s.mapFn = func(obj T) []Key { return controllerOf(obj, primary) }
		if err := requestOwnerIndex[T](m, s.res, s.scope); err != nil {
			return nil, err
		}
	}
	inf, err := informerIn[T](m, s.res, s.scope)
	if err != nil {
		return nil, err
	}
	if s.primary && len(s.preds) == 0 {
		// The store's keys are the objects' own: no object is needed, so a
		// compact cache decodes nothing for the events.
		_, err = inf.AddHandler(informer.KeyChangeHandler[T](func(k string, c informer.KeyChange) {
			enqueue(keyOfStoreKey(k), changePriority(c))
		}), informer.HandlerOptions{Resync: true})
		if err != nil {
			return nil, err
		}
		return inf.WaitForSync, nil
	}
	emit := func(obj T, p queue.Priority) {
		for _, k := range s.mapFn(obj) {
			enqueue(k, p)
		}
	}
	_, err = inf.AddHandler(informer.HandlerFuncs[T]{
		AddFunc: func(obj T, initial bool) {
			if all(s.preds, func(p Predicate[T]) bool { return p.create(obj) }) {
				emit(obj, changePriority(informer.KeyChange{InitialList: initial}))
			}
		},
		UpdateFunc: func(old, new T) {
			if !all(s.preds, func(p Predicate[T]) bool { return p.update(old, new) }) {
				return
			}
			// A resync hands the stored object as both old and new.
			resync := old.GetResourceVersion() == new.GetResourceVersion()
			emit(new, changePriority(informer.KeyChange{Resync: resync}))
			s.emitMoved(old, new, enqueue)
		},
		DeleteFunc: func(obj T, _ bool) {
			if all(s.preds, func(p Predicate[T]) bool { return p.delete(obj) }) {
				emit(obj, queue.PriorityNormal)
			}
		},
	}, informer.HandlerOptions{Resync: true})
	if err != nil {
		return nil, err
	}
	return inf.WaitForSync, nil
}

// keyOfStoreKey is the Key of a store key, store.MetaKey's "namespace/name"
// or "name".
func keyOfStoreKey(k string) Key {
	if ns, name, ok := strings.Cut(k, "/"); ok {
		return Key{Namespace: ns, Name: name}
	}
	return Key{Name: k}
}

// emitMoved enqueues the keys of the old object that the new one does not
// map to: the previous owner of an object that changed owners.
func (s *source[T]) emitMoved(old, new T, enqueue enqueueFunc) {
	newKeys := s.mapFn(new)
	for _, k := range s.mapFn(old) {
		if !containsKey(newKeys, k) {
			enqueue(k, queue.PriorityNormal)
		}
	}
}

// enqueueFunc queues a key at a priority.
type enqueueFunc func(Key, queue.Priority)

// changePriority is the one place that says which events are worth less
// than a change: an add from the informer's initial list and a resync
// only confirm what the controller will see anyway, so they wait at low
// priority behind real changes (and age, so they are not starved; see
// package queue). Everything else is a change.
func changePriority(c informer.KeyChange) queue.Priority {
	if c.InitialList || c.Resync {
		return queue.PriorityLow
	}
	return queue.PriorityNormal
}

func containsKey(keys []Key, k Key) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// controllerOf is the key of obj's controlling owner of the primary's
// kind and group, if any.
func controllerOf[T watch.Object](obj T, primary kube.Resource) []Key {
	o, ok := any(obj).(ownerer)
	if !ok {
		return nil
	}
	for _, ref := range o.GetOwnerReferences() {
		if ref.Controller == nil || !*ref.Controller || ref.Kind != primary.Kind || groupOf(ref.APIVersion) != primary.Group {
			continue
		}
		ns := obj.GetNamespace()
		if !primary.Namespaced {
			ns = ""
		}
		return []Key{{Namespace: ns, Name: ref.Name}}
	}
	return nil
}

// groupOf is the group of an apiVersion: "" for "v1", "apps" for "apps/v1".
func groupOf(apiVersion string) string {
	g, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	return g
}
