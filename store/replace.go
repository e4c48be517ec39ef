package store

// Replacement is a store's next contents, built page by page during a
// relist and swapped in whole by Store.Commit. Readers see nothing of it
// until then, so they never observe a half-listed state.
//
// The zero value is not usable: Add returns ErrReplacementDone; make one
// with Store.NewReplacement. A Replacement is for one goroutine (the one
// listing) and is used up by Commit.
type Replacement[T any] struct {
	s *Store[T]    // the store it belongs to; nil once committed
	c *contents[T] // the contents being built; nil once committed
}

// NewReplacement returns an empty replacement for s. Its map is sized for
// s's current length, the best guess of what the relist will bring.
func (s *Store[T]) NewReplacement() *Replacement[T] {
	return &Replacement[T]{s: s, c: newContents[T](len(s.indexers), s.Len())}
}

// NewReplacementSized returns an empty replacement for s with its map sized
// for n objects: for a caller that knows how many are coming (a snapshot's
// record count), so the map does not grow step by step while it fills.
func (s *Store[T]) NewReplacementSized(n int) *Replacement[T] {
	return &Replacement[T]{s: s, c: newContents[T](len(s.indexers), max(n, 0))}
}

// Add puts obj in the replacement; a later Add with the same key replaces
// the earlier one. A key or index function error is returned and the
// replacement is unchanged.
func (r *Replacement[T]) Add(obj T) error {
	if r == nil || r.c == nil {
		return ErrReplacementDone
	}
	var buf [maxStackIndexes]valueSet
	vals := r.s.valueTable(&buf)
	key, err := r.s.prepare(obj, vals)
	if err != nil {
		return err
	}
	r.c.put(key, obj, vals, r.s.indexers)
	return nil
}

// Len returns the number of objects added so far (distinct keys); 0 after
// Commit.
func (r *Replacement[T]) Len() int {
	if r == nil || r.c == nil {
		return 0
	}
	return len(r.c.items)
}

// Commit makes r the store's contents in one pointer swap, records rv (an
// empty rv leaves it unchanged), and returns the previous key to object map
// for the caller to diff against; the store keeps no reference to it. r is
// used up. A nil r, one already committed or one made by another store
// leaves the store unchanged and returns nil.
func (s *Store[T]) Commit(r *Replacement[T], rv string) (old map[string]T) {
	if r == nil || r.c == nil || r.s != s {
		return nil
	}
	s.mu.Lock()
	prev := s.cur
	s.cur = r.c
	s.setRVLocked(rv)
	s.mu.Unlock()
	r.s, r.c = nil, nil
	return prev.items
}
