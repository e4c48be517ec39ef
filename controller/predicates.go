package controller

import (
	"maps"
)

// Predicate decides which changes of a watched object enqueue a key.
// A nil field lets every change of that kind through. Creates and
// deletes pass unless Create or Delete say otherwise; Update sees the old
// and the new object.
type Predicate[T any] struct {
	Create func(obj T) bool
	Update func(old, new T) bool
	Delete func(obj T) bool
}

func (p Predicate[T]) create(obj T) bool      { return p.Create == nil || p.Create(obj) }
func (p Predicate[T]) update(old, new T) bool { return p.Update == nil || p.Update(old, new) }
func (p Predicate[T]) delete(obj T) bool      { return p.Delete == nil || p.Delete(obj) }

// all reports whether every predicate lets a change through.
func all[T any](ps []Predicate[T], pass func(Predicate[T]) bool) bool {
	for _, p := range ps {
		if !pass(p) {
			return false
		}
	}
	return true
}

type generationer interface{ GetGeneration() int64 }
type labeled interface{ GetLabels() map[string]string }
type annotated interface{ GetAnnotations() map[string]string }
type versioned interface{ GetResourceVersion() string }

// GenerationChanged lets an update through only when metadata.generation
// changed: a change of spec, not of status or metadata. T must have
// GetGeneration (metav1.ObjectMeta gives it); for a T without it every
// update passes.
func GenerationChanged[T any]() Predicate[T] {
	return Predicate[T]{Update: func(old, new T) bool {
		o, ok1 := any(old).(generationer)
		n, ok2 := any(new).(generationer)
		return !ok1 || !ok2 || o.GetGeneration() != n.GetGeneration()
	}}
}

// LabelsChanged lets an update through only when the labels changed.
func LabelsChanged[T any]() Predicate[T] {
	return Predicate[T]{Update: func(old, new T) bool {
		o, ok1 := any(old).(labeled)
		n, ok2 := any(new).(labeled)
		return !ok1 || !ok2 || !maps.Equal(o.GetLabels(), n.GetLabels())
	}}
}

// AnnotationsChanged lets an update through only when the annotations
// changed.
func AnnotationsChanged[T any]() Predicate[T] {
	return Predicate[T]{Update: func(old, new T) bool {
		o, ok1 := any(old).(annotated)
		n, ok2 := any(new).(annotated)
		return !ok1 || !ok2 || !maps.Equal(o.GetAnnotations(), n.GetAnnotations())
	}}
}

// ResourceVersionChanged lets an update through only when the object
// changed on the server: it drops the informer's resyncs.
func ResourceVersionChanged[T any]() Predicate[T] {
	return Predicate[T]{Update: func(old, new T) bool {
		o, ok1 := any(old).(versioned)
		n, ok2 := any(new).(versioned)
		return !ok1 || !ok2 || o.GetResourceVersion() != n.GetResourceVersion()
	}}
}

// Or lets a change through when any of ps does.
func Or[T any](ps ...Predicate[T]) Predicate[T] {
	return Predicate[T]{
		Create: func(obj T) bool {
			for _, p := range ps {
				if p.create(obj) {
					return true
				}
			}
			return len(ps) == 0
		},
		Update: func(old, new T) bool {
			for _, p := range ps {
				if p.update(old, new) {
					return true
				}
			}
			return len(ps) == 0
		},
		Delete: func(obj T) bool {
			for _, p := range ps {
				if p.delete(obj) {
					return true
				}
			}
			return len(ps) == 0
		},
	}
}
