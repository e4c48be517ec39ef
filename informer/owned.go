package informer

import (
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// GetOwned returns the object stored under key as one the caller owns and
// may change, which no other reader shares: for a reader about to modify
// what it read (a controller's cache read, which writes it back).
//
// In StoreTyped, and in StoreCompact when the decode cache holds the
// object, it is copy applied to the shared object. In StoreCompact
// otherwise (an object changed since any reader last read it: the usual
// read after an event), a protobuf object is decoded from its encoded
// bytes for the caller alone and does not enter the decode cache: one
// decode, where a shared read and a copy would cost a decode and a copy.
// A JSON object is read shared and copied: the JSON decoder interns
// managedFields' bytes, which an object the caller may change must not
// share (the protobuf decode of a Raw interns nothing and copies its
// bytes). An object that does not decode is absent, as from Store().Get,
// and its error is counted and logged as there.
func (inf *Informer[T]) GetOwned(key string, copy func(T) (T, error)) (obj T, ok bool, err error) {
	c := inf.compact
	if c == nil {
		cur, found := inf.store.Get(key)
		if !found {
			return obj, false, nil
		}
		obj, err = copy(cur)
		return obj, err == nil, err
	}
	r, found := c.raw.store.Get(key)
	if !found {
		return obj, false, nil
	}
	return c.owned(r, copy)
}

// owned is GetOwned of r, a stored object of a compact store.
func (c *compactSide[T]) owned(r *watch.Raw, copy func(T) (T, error)) (obj T, ok bool, err error) {
	if !r.Protobuf() {
		shared, derr := c.decode(r)
		if derr != nil {
			return obj, false, nil
		}
		obj, err = copy(shared)
		return obj, err == nil, err
	}
	if cur, derr, cached := c.cache.get(r); cached {
		if derr != nil {
			return obj, false, nil
		}
		obj, err = copy(cur)
		return obj, err == nil, err
	}
	c.decodes.Add(1)
	if own, derr := c.codec.Decode(r); derr == nil {
		return own, true, nil
	}
	// The shared path records the failure (counts, logs and caches it).
	_, _ = c.decode(r)
	return obj, false, nil
}

// ListOwned returns, each as GetOwned makes it, the stored objects whose
// index has value (index "": every object) and whose labels sel matches
// (nil: every object), in no particular order. In StoreCompact the labels
// are read from each object's metadata, so that only the objects returned
// are decoded (or copied, as GetOwned says; a protobuf one decoded for
// the caller enters no decode cache): a list by label selector of a large
// namespace costs the matching objects, not all of them. An object that does not decode is
// left out, as from Store().List. err is an unknown index's, or copy's.
func (inf *Informer[T]) ListOwned(index, value string, sel labels.Selector, copy func(T) (T, error)) ([]T, error) {
	if c := inf.compact; c != nil {
		raws, err := listed(c.raw.store, index, value)
		if err != nil {
			return nil, err
		}
		out := make([]T, 0, len(raws))
		for _, r := range raws {
			if sel != nil && !sel.Empty() && !sel.Matches(r.Labels()) {
				continue
			}
			obj, ok, err := c.owned(r, copy)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, obj)
			}
		}
		return out, nil
	}
	items, err := listed(inf.store, index, value)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	for _, it := range items {
		if sel != nil && !sel.Empty() && !sel.Matches(labels.Set(labelsOf(it))) {
			continue
		}
		obj, err := copy(it)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

// listed is s's objects whose index has value, or all for index "".
func listed[O any](s *store.Store[O], index, value string) ([]O, error) {
	if index == "" {
		return s.List(), nil
	}
	return s.ByIndex(index, value)
}

// labelsOf is obj's labels, none for a type without them.
func labelsOf(obj any) map[string]string {
	if l, ok := obj.(interface{ GetLabels() map[string]string }); ok {
		return l.GetLabels()
	}
	return nil
}
