package informer

import (
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// compactView is the store.Reader of a compact informer: the Raw store's
// view, decoding the objects it returns. An object that does not decode
// is absent from what it returns (see StoreCompact).
type compactView[T watch.Object] struct {
	c   *compactSide[T]
	raw store.View[*watch.Raw]
}

func (v compactView[T]) Key(obj T) (string, error) {
	if v.c.key != nil {
		return v.c.key(obj)
	}
	return store.MetaKey(obj)
}

func (v compactView[T]) ResourceVersion() string { return v.raw.ResourceVersion() }

func (v compactView[T]) Get(key string) (T, bool) {
	r, ok := v.raw.Get(key)
	if !ok {
		var zero T
		return zero, false
	}
	obj, err := v.c.decode(r)
	return obj, err == nil
}

func (v compactView[T]) GetByObject(obj T) (T, bool, error) {
	key, err := v.Key(obj)
	if err != nil {
		var zero T
		return zero, false, err
	}
	got, ok := v.Get(key)
	return got, ok, nil
}

func (v compactView[T]) Len() int             { return v.raw.Len() }
func (v compactView[T]) ListKeys() []string   { return v.raw.ListKeys() }
func (v compactView[T]) IndexNames() []string { return v.raw.IndexNames() }

func (v compactView[T]) List() []T { return v.decodeAll(v.raw.List()) }

func (v compactView[T]) Snapshot() map[string]T {
	raws := v.raw.Snapshot()
	v.c.cache.batch(len(raws))
	out := make(map[string]T, len(raws))
	for k, r := range raws {
		if obj, err := v.c.decode(r); err == nil {
			out[k] = obj
		}
	}
	return out
}

func (v compactView[T]) ByIndex(index, value string) ([]T, error) {
	raws, err := v.raw.ByIndex(index, value)
	if err != nil {
		return nil, err
	}
	return v.decodeAll(raws), nil
}

func (v compactView[T]) IndexKeys(index, value string) ([]string, error) {
	return v.raw.IndexKeys(index, value)
}

func (v compactView[T]) IndexValues(index string) ([]string, error) { return v.raw.IndexValues(index) }

// decodeAll decodes a batch read, after telling the cache its size: a
// cache sized by use makes room for it, so the same read repeated over
// unchanged objects decodes nothing.
func (v compactView[T]) decodeAll(raws []*watch.Raw) []T {
	if raws == nil {
		return nil // as the typed store answers
	}
	v.c.cache.batch(len(raws))
	out := make([]T, 0, len(raws))
	for _, r := range raws {
		if obj, err := v.c.decode(r); err == nil {
			out = append(out, obj)
		}
	}
	return out
}
