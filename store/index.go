package store

// bucket holds the keys of the objects that share one index value.
//
// Invariants: a bucket stored in an index is never empty. With one key, the
// key is in one and set is nil: most values of a unique-ish index (a UID, an
// owner) hold a single key, and a map for it would cost about 200 bytes.
// With two or more keys, set holds them all and one is "". Keys are never
// "" (Store.Key refuses them), so one == "" && set == nil means empty.
type bucket struct {
	one string
	set map[string]struct{}
}

func (b bucket) len() int {
	switch {
	case b.set != nil:
		return len(b.set)
	case b.one != "":
		return 1
	}
	return 0
}

func (b bucket) has(key string) bool {
	if b.set != nil {
		_, ok := b.set[key]
		return ok
	}
	return b.one == key
}

func (b bucket) appendKeys(dst []string) []string {
	if b.set == nil {
		return append(dst, b.one)
	}
	for k := range b.set {
		dst = append(dst, k)
	}
	return dst
}

// with returns b with key added. The returned bucket may share b's set.
func (b bucket) with(key string) bucket {
	switch {
	case b.set != nil:
		b.set[key] = struct{}{}
	case b.one == "":
		b.one = key
	case b.one != key:
		b.set = map[string]struct{}{b.one: {}, key: {}}
		b.one = ""
	}
	return b
}

// without returns b with key removed, and whether key was there.
func (b bucket) without(key string) (bucket, bool) {
	if b.set == nil {
		if b.one != key {
			return b, false
		}
		return bucket{}, true
	}
	if _, ok := b.set[key]; !ok {
		return b, false
	}
	delete(b.set, key)
	if len(b.set) == 1 {
		// Back to the compact form so a value that had many keys and now has
		// one does not keep a map alive.
		for k := range b.set {
			return bucket{one: k}, true
		}
	}
	return b, true
}

// index maps an index value to the keys of the objects that produce it.
// Invariant: no value maps to an empty bucket.
type index map[string]bucket

func (ix index) add(key, value string) {
	ix[value] = ix[value].with(key)
}

// remove drops key from value's bucket and reports whether it was there.
func (ix index) remove(key, value string) bool {
	b, ok := ix[value]
	if !ok {
		return false
	}
	b, found := b.without(key)
	if !found {
		return false
	}
	if b.len() == 0 {
		delete(ix, value)
	} else {
		ix[value] = b
	}
	return true
}

// scrub removes key from every bucket. It is the slow path taken when an
// object's recomputed index values do not match what the index holds (an
// index function that is not deterministic, or an object mutated after it
// was stored); it keeps the index exact at the cost of one full scan.
func (ix index) scrub(key string) {
	for v, b := range ix {
		if !b.has(key) {
			continue
		}
		ix.remove(key, v)
	}
}

// addAll adds key under every value of vals that is not in skip.
func (ix index) addAll(key string, vals, skip []string) {
	for _, v := range vals {
		if !contains(skip, v) {
			ix.add(key, v)
		}
	}
}

// removeAll removes key from every value of vals that is not in keep, and
// checks that key is present under the values of vals that are in keep.
// It reports false if key was missing anywhere: the caller must scrub.
func (ix index) removeAll(key string, vals, keep []string) bool {
	exact := true
	for i, v := range vals {
		if contains(vals[:i], v) {
			continue // a duplicate value, already handled
		}
		if contains(keep, v) {
			exact = exact && ix[v].has(key)
			continue
		}
		exact = ix.remove(key, v) && exact
	}
	return exact
}

// update moves key from the values oldVals to newVals. oldErr is the error
// the index function returned when recomputing oldVals, if any.
func (ix index) update(key string, oldVals []string, oldErr error, newVals []string) {
	if oldErr == nil && ix.removeAll(key, oldVals, newVals) {
		ix.addAll(key, newVals, oldVals)
		return
	}
	ix.scrub(key)
	ix.addAll(key, newVals, nil)
}

// contains is a linear scan: index functions return a handful of values.
func contains(vals []string, v string) bool {
	for _, x := range vals {
		if x == v {
			return true
		}
	}
	return false
}
