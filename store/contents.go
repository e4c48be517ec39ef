package store

// indexer is one named index function. A Store keeps its indexers sorted by
// name; contents.indexes is parallel to that slice.
type indexer[T any] struct {
	name string
	fn   IndexFunc[T]
	// builtinNS marks the built-in namespace index, which values answers
	// without calling fn so that it costs no slice per call: every write
	// runs it once for the new object and once for the old.
	builtinNS bool
	// byKey marks the built-in namespace index of a store keyed by MetaKey:
	// the key names the namespace, so a new version of a stored key is
	// already under its value and a write of it leaves the index alone.
	byKey bool
}

// values returns obj's values for this index.
func (ix *indexer[T]) values(obj T) (valueSet, error) {
	if !ix.builtinNS {
		list, err := ix.call(obj)
		return valueSet{list: list}, err
	}
	ns, err := objectNamespace(obj)
	return valueSet{one: ns}, err
}

// call calls the index function, a panic of which is a *PanicError.
func (ix *indexer[T]) call(obj T) (list []string, err error) {
	defer recoveredIndex(ix.name, &err)
	return ix.fn(obj)
}

// valueSet is an object's values for one index: the built-in namespace
// index's single value inline in one ("" for none), or an index function's
// answer in list. Keeping the single value out of a slice lets a write
// carry it on the stack.
type valueSet struct {
	one  string
	list []string
}

// slice returns the values as a slice, using buf for a single value.
func (v valueSet) slice(buf *[1]string) []string {
	if v.one == "" {
		return v.list
	}
	buf[0] = v.one
	return buf[:]
}

// contents is one generation of a store's data: the objects and every index
// over them. A Store swaps a whole contents on Commit; a Replacement builds
// one off to the side. contents has no lock of its own: the Store's mutex
// guards the live one, and a Replacement's is private to its builder.
//
// Invariant: for every indexer i and every key k in items, k is in
// indexes[i][v] exactly for the values v that indexers[i].fn(items[k])
// returns, and no index holds a key that is not in items.
type contents[T any] struct {
	items   map[string]T
	indexes []index // parallel to the Store's indexers
}

func newContents[T any](nIndexes, sizeHint int) *contents[T] {
	c := &contents[T]{
		items:   make(map[string]T, sizeHint),
		indexes: make([]index, nIndexes),
	}
	for i := range c.indexes {
		c.indexes[i] = make(index)
	}
	return c
}

// put stores obj under key. vals are obj's values, one per indexer,
// computed by the caller (outside any lock). It returns the object it
// replaced, if any.
func (c *contents[T]) put(key string, obj T, vals []valueSet, fns []indexer[T]) (old T, existed bool) {
	old, existed = c.items[key]
	c.items[key] = obj
	var newBuf, oldBuf [1]string
	for i, ix := range c.indexes {
		newVals := vals[i].slice(&newBuf)
		if !existed {
			ix.addAll(key, newVals, nil)
			continue
		}
		if fns[i].byKey {
			continue
		}
		oldSet, err := fns[i].values(old)
		ix.update(key, oldSet.slice(&oldBuf), err, newVals)
	}
	return old, existed
}

// remove deletes key and its index entries, returning the object it held.
func (c *contents[T]) remove(key string, fns []indexer[T]) (old T, existed bool) {
	old, existed = c.items[key]
	if !existed {
		return old, false
	}
	delete(c.items, key)
	var buf [1]string
	for i, ix := range c.indexes {
		oldSet, err := fns[i].values(old)
		if err != nil || !ix.removeAll(key, oldSet.slice(&buf), nil) {
			ix.scrub(key)
		}
	}
	return old, true
}

// objects returns the objects stored under keys.
func (c *contents[T]) objects(b bucket) []T {
	if b.set == nil {
		if b.one == "" {
			return nil
		}
		return []T{c.items[b.one]}
	}
	out := make([]T, 0, len(b.set))
	for k := range b.set {
		out = append(out, c.items[k])
	}
	return out
}
