package informer

import (
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// KeyChange says what a key given to a KeyChangeHandler stands for, so
// that a workqueue can put keys that only confirm known state behind keys
// whose object changed.
type KeyChange struct {
	// InitialList is true for an add of the informer's first list (for a
	// handler added later, of the store when it was added): the handler's
	// OnAdd would have had inInitialList set.
	InitialList bool
	// Resync is true for a re-delivery of an unchanged object by
	// Options.ResyncPeriod, with no change of the object merged into it.
	Resync bool
}

// KeyChangeHandler is KeyHandler that also says whether each key comes
// from the initial list or a resync. Like KeyHandler it never decodes an
// object of a compact store.
func KeyChangeHandler[T watch.Object](enqueue func(key string, c KeyChange)) Handler[T] {
	return keyChangeHandler[T](enqueue)
}

// keyChangeReceiver is a handler that wants the store key of each change
// and what the change is.
type keyChangeReceiver interface {
	onKeyChange(key string, c KeyChange)
}

// keyChangeHandler is KeyChangeHandler's Handler. The informer delivers to
// it through onKeyChange; its On* methods serve callers that use it
// directly, and can only compute the default key.
type keyChangeHandler[T watch.Object] func(key string, c KeyChange)

func (h keyChangeHandler[T]) onKeyChange(key string, c KeyChange) { h(key, c) }

func (h keyChangeHandler[T]) OnAdd(obj T, initial bool) {
	h.metaKey(obj, KeyChange{InitialList: initial})
}

func (h keyChangeHandler[T]) OnUpdate(old, obj T) {
	h.metaKey(obj, KeyChange{Resync: old.GetResourceVersion() == obj.GetResourceVersion()})
}

func (h keyChangeHandler[T]) OnDelete(obj T, _ bool) { h.metaKey(obj, KeyChange{}) }

func (h keyChangeHandler[T]) metaKey(obj T, c KeyChange) {
	if k, err := store.MetaKey(obj); err == nil {
		h(k, c)
	}
}
