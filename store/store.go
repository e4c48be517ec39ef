package store

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// KeyFunc returns the key an object is stored under. It must be a
// deterministic function of the object and never return "" without an
// error. A panic is an error too (*PanicError).
type KeyFunc[T any] func(obj T) (string, error)

// IndexFunc returns the values an object is indexed under (none is fine;
// duplicates count once). It must be a deterministic function of the
// object: the store recomputes an object's old values, rather than keep a
// copy per object, to remove them on update and delete. It runs with the
// store's write lock held for that, so it must not call the store. A
// panic is an error too (*PanicError).
type IndexFunc[T any] func(obj T) ([]string, error)

// NamespaceIndex is the built-in index by GetNamespace(). Objects with an
// empty namespace are not in it.
const NamespaceIndex = "namespace"

// Options configures New. The zero value is ready to use: MetaKey keys and
// only the namespace index.
type Options[T any] struct {
	// Key computes an object's key. nil: MetaKey, "namespace/name" or
	// "name" when the namespace is empty.
	Key KeyFunc[T]
	// Indexers are named index functions. nil: none besides NamespaceIndex,
	// which is always added unless this map supplies its own function under
	// that name. A nil function in the map is ignored.
	Indexers map[string]IndexFunc[T]
}

// Store is an indexed, thread-safe map of objects by key.
//
// The zero value is not usable; make one with New. All methods are safe for
// concurrent use. Readers (Get, List, ByIndex, ...) take a shared lock and
// never block each other; writers (Upsert, Delete, Commit) are meant for a
// single owner, the informer, and compute a new object's key and index
// values before taking the lock. Objects handed in become shared: the store
// and every reader see the same value, so nobody may mutate an object after
// Upsert or one returned by a reader.
//
// Most callers read with Get and ByIndex(NamespaceIndex, ns); a relist
// goes through NewReplacement and Commit.
type Store[T any] struct {
	key      KeyFunc[T]     // immutable after New
	indexers []indexer[T]   // immutable after New; sorted by name
	byName   map[string]int // immutable after New; name -> position in indexers

	mu  sync.RWMutex
	cur *contents[T] // guarded by mu; replaced whole by Commit, never nil
	rv  string       // guarded by mu; resourceVersion of the last write
}

// New returns an empty store configured by opts.
func New[T any](opts Options[T]) *Store[T] {
	s := &Store[T]{key: opts.Key, byName: make(map[string]int)}
	if s.key == nil {
		s.key = func(obj T) (string, error) { return MetaKey(obj) }
	}
	fns := map[string]IndexFunc[T]{NamespaceIndex: nil} // nil: the built-in
	for name, fn := range opts.Indexers {
		if fn != nil {
			fns[name] = fn
		}
	}
	for _, name := range slices.Sorted(maps.Keys(fns)) {
		s.byName[name] = len(s.indexers)
		builtin := fns[name] == nil
		s.indexers = append(s.indexers, indexer[T]{name: name, fn: fns[name], builtinNS: builtin, byKey: builtin && opts.Key == nil})
	}
	s.cur = newContents[T](len(s.indexers), 0)
	return s
}

// Key returns obj's key by the configured key function. Its errors wrap
// ErrInvalidKey; an empty key is an error too.
func (s *Store[T]) Key(obj T) (string, error) {
	k, err := s.callKey(obj)
	if err != nil {
		return "", fmt.Errorf("store: %w: %w", ErrInvalidKey, err)
	}
	if k == "" {
		return "", fmt.Errorf("store: %w: key function returned an empty key for %T", ErrInvalidKey, obj)
	}
	return k, nil
}

// callKey calls the key function, a panic of which is a *PanicError.
func (s *Store[T]) callKey(obj T) (k string, err error) {
	defer recoveredKey(&err)
	return s.key(obj)
}

// maxStackIndexes is how many indexers a write handles without allocating
// its table of values; stores with more allocate one per write.
const maxStackIndexes = 4

// prepare computes obj's key and its values for every indexer into vals
// (len(s.indexers) long), before any lock is taken.
func (s *Store[T]) prepare(obj T, vals []valueSet) (string, error) {
	key, err := s.Key(obj)
	if err != nil {
		return "", err
	}
	for i := range s.indexers {
		ix := &s.indexers[i]
		v, err := ix.values(obj)
		if err != nil {
			return "", &IndexError{Index: ix.name, Key: key, Err: err}
		}
		vals[i] = v
	}
	return key, nil
}

// valueTable returns a table for len(s.indexers) value sets, on buf when
// it fits.
func (s *Store[T]) valueTable(buf *[maxStackIndexes]valueSet) []valueSet {
	if len(s.indexers) <= len(buf) {
		return buf[:len(s.indexers)]
	}
	return make([]valueSet, len(s.indexers))
}

// Upsert adds obj or replaces the object with its key, and records rv as
// the store's resourceVersion (an empty rv leaves it unchanged). It returns
// the replaced object. If the key or an index function fails, the error is
// returned (an *IndexError for an index) and the store is unchanged.
func (s *Store[T]) Upsert(obj T, rv string) (old T, existed bool, err error) {
	var buf [maxStackIndexes]valueSet
	vals := s.valueTable(&buf)
	key, err := s.prepare(obj, vals)
	if err != nil {
		return old, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, existed = s.cur.put(key, obj, vals, s.indexers)
	s.setRVLocked(rv)
	return old, existed, nil
}

// Delete removes the object with key, if any, and records rv (an empty rv
// leaves it unchanged). It returns the removed object.
func (s *Store[T]) Delete(key string, rv string) (old T, existed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, existed = s.cur.remove(key, s.indexers)
	s.setRVLocked(rv)
	return old, existed
}

// SetResourceVersion records rv without changing any object; the informer
// calls it for a bookmark.
func (s *Store[T]) SetResourceVersion(rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv = rv
}

// setRVLocked records a non-empty rv. The caller holds mu for writing.
func (s *Store[T]) setRVLocked(rv string) {
	if rv != "" {
		s.rv = rv
	}
}

// ResourceVersion returns the resourceVersion of the last write, commit or
// bookmark, "" before any.
func (s *Store[T]) ResourceVersion() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rv
}

// Get returns the object stored under key. The object is shared: read only.
func (s *Store[T]) Get(key string) (T, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	obj, ok := s.cur.items[key]
	return obj, ok
}

// GetByObject returns the stored object with obj's key; the error is the
// key function's.
func (s *Store[T]) GetByObject(obj T) (T, bool, error) {
	key, err := s.Key(obj)
	if err != nil {
		var zero T
		return zero, false, err
	}
	got, ok := s.Get(key)
	return got, ok, nil
}

// Len returns the number of objects.
func (s *Store[T]) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.cur.items)
}

// List returns every object, in no particular order, in a new slice. The
// objects are shared: read only.
func (s *Store[T]) List() []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]T, 0, len(s.cur.items))
	for _, obj := range s.cur.items {
		out = append(out, obj)
	}
	return out
}

// ListKeys returns every key, in no particular order.
func (s *Store[T]) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.cur.items))
	for k := range s.cur.items {
		out = append(out, k)
	}
	return out
}

// Items returns every key and its object, in no particular order, read
// together under one lock: keys[i] is the key of objs[i]. The objects are
// shared: read only. A caller that needs both saves a Key call per object,
// which reads the object (for a compact store, bytes scattered over the
// heap).
func (s *Store[T]) Items() (keys []string, objs []T) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys = make([]string, 0, len(s.cur.items))
	objs = make([]T, 0, len(s.cur.items))
	for k, obj := range s.cur.items {
		keys = append(keys, k)
		objs = append(objs, obj)
	}
	return keys, objs
}

// Snapshot returns a copy of the key to object map, for tests and
// debugging. The objects are shared: read only.
func (s *Store[T]) Snapshot() map[string]T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return maps.Clone(s.cur.items)
}

// SnapshotAt returns a copy of the key to object map and the
// resourceVersion it reflects, read together under one lock: what a
// snapshot file holds. The objects are shared: read only.
func (s *Store[T]) SnapshotAt() (map[string]T, string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return maps.Clone(s.cur.items), s.rv
}

// IndexNames returns the configured index names, sorted.
func (s *Store[T]) IndexNames() []string {
	out := make([]string, len(s.indexers))
	for i, ix := range s.indexers {
		out[i] = ix.name
	}
	return out
}

// indexPos returns the position of the named index, or an error wrapping
// ErrUnknownIndex that names it and the known ones.
func (s *Store[T]) indexPos(name string) (int, error) {
	i, ok := s.byName[name]
	if !ok {
		return 0, fmt.Errorf("store: %w %q (known: %s)", ErrUnknownIndex, name, strings.Join(s.IndexNames(), ", "))
	}
	return i, nil
}

// ByIndex returns the objects whose index function returned value, in no
// particular order. The objects are shared: read only.
func (s *Store[T]) ByIndex(index, value string) ([]T, error) {
	i, err := s.indexPos(index)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cur.objects(s.cur.indexes[i][value]), nil
}

// IndexKeys returns the keys of the objects whose index function returned
// value, in no particular order.
func (s *Store[T]) IndexKeys(index, value string) ([]string, error) {
	i, err := s.indexPos(index)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	b := s.cur.indexes[i][value]
	if b.len() == 0 {
		return nil, nil
	}
	return b.appendKeys(make([]string, 0, b.len())), nil
}

// IndexValues returns every value the named index holds at least one
// object under, in no particular order.
func (s *Store[T]) IndexValues(index string) ([]string, error) {
	i, err := s.indexPos(index)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	ix := s.cur.indexes[i]
	out := make([]string, 0, len(ix))
	for v := range ix {
		out = append(out, v)
	}
	return out, nil
}
