package informer

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
