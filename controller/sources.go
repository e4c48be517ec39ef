package controller

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// Source feeds a controller's queue from a watched resource: its primary
// resource (Config.For), the objects it owns (Owns), or any other through
// a mapping (Watches). Sources share the manager's informers.
type Source interface {
	// start registers the source's handler on its informer: enqueue gets
	// the keys of the primary objects to reconcile. synced reports when
	// the informer has synced.
	start(m *Manager, primary kube.Resource, enqueue func(Key)) (synced func(context.Context) bool, err error)
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
func Owns[T watch.Object](res kube.Resource, preds ...Predicate[T]) Source {
	return &source[T]{res: res, preds: preds, owned: true}
}

// OwnsIn is Owns for the objects of res in scope.
func OwnsIn[T watch.Object](res kube.Resource, scope Scope, preds ...Predicate[T]) Source {
	return &source[T]{res: res, scope: scope, preds: preds, owned: true}
}

// Watches watches objects of res and enqueues the keys mapFn returns for
// each change (old and new object both mapped on an update).
func Watches[T watch.Object](res kube.Resource, mapFn func(T) []Key, preds ...Predicate[T]) Source {
	return &source[T]{res: res, preds: preds, mapFn: mapFn}
}

// WatchesIn is Watches for the objects of res in scope.
func WatchesIn[T watch.Object](res kube.Resource, scope Scope, mapFn func(T) []Key, preds ...Predicate[T]) Source {
	return &source[T]{res: res, scope: scope, preds: preds, mapFn: mapFn}
}

// forSource is the controller's primary resource: a change enqueues the
// object's own key.
func forSource[T watch.Object](res kube.Resource, scope Scope, preds []Predicate[T]) *source[T] {
	return &source[T]{res: res, scope: scope, preds: preds, primary: true,
		mapFn: func(obj T) []Key { return []Key{KeyOf(obj)} }}
}

type source[T watch.Object] struct {
	res   kube.Resource
	scope Scope
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

func (s *source[T]) start(m *Manager, primary kube.Resource, enqueue func(Key)) (func(context.Context) bool, error) {
	if s.owned {
		var zero T
		if _, ok := any(zero).(ownerer); !ok {
			return nil, fmt.Errorf("controller: Owns(%s): %T has no GetOwnerReferences", s.res, zero)
		}
		s.mapFn = func(obj T) []Key { return controllerOf(obj, primary) }
	}
	inf, err := InformerIn[T](m, s.res, s.scope)
	if err != nil {
		return nil, err
	}
	if s.primary && len(s.preds) == 0 {
		// The store's keys are the objects' own: no object is needed, so a
		// compact cache decodes nothing for the events.
		_, err = inf.AddHandler(informer.KeyHandler[T](func(k string) { enqueue(keyOfStoreKey(k)) }), informer.HandlerOptions{})
		if err != nil {
			return nil, err
		}
		return inf.WaitForSync, nil
	}
	emit := func(obj T) {
		for _, k := range s.mapFn(obj) {
			enqueue(k)
		}
	}
	_, err = inf.AddHandler(informer.HandlerFuncs[T]{
		AddFunc: func(obj T, _ bool) {
			if all(s.preds, func(p Predicate[T]) bool { return p.create(obj) }) {
				emit(obj)
			}
		},
		UpdateFunc: func(old, new T) {
			if !all(s.preds, func(p Predicate[T]) bool { return p.update(old, new) }) {
				return
			}
			emit(new)
			s.emitMoved(old, new, enqueue)
		},
		DeleteFunc: func(obj T, _ bool) {
			if all(s.preds, func(p Predicate[T]) bool { return p.delete(obj) }) {
				emit(obj)
			}
		},
	}, informer.HandlerOptions{})
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
func (s *source[T]) emitMoved(old, new T, enqueue func(Key)) {
	newKeys := s.mapFn(new)
	for _, k := range s.mapFn(old) {
		if !containsKey(newKeys, k) {
			enqueue(k)
		}
	}
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
