package store

// View is the read side of a Store: what an informer hands its readers, so
// that no reader can write to the cache the informer keeps equal to the
// server. Its methods are those of Store and behave the same; the objects
// they return are shared with the store and every other reader, so they
// must not be modified either.
//
// A View is a small value, safe for concurrent use, and always shows the
// store's current contents. The zero View is not usable; get one from
// Store.View, or NewView for a Reader of another kind (the informer's
// compact store decodes its objects on read behind one).
type View[T any] struct{ s Reader[T] }

// Reader is what a View reads from: the read methods of Store, with the
// same meaning.
type Reader[T any] interface {
	Key(obj T) (string, error)
	ResourceVersion() string
	Get(key string) (T, bool)
	GetByObject(obj T) (T, bool, error)
	Len() int
	List() []T
	ListKeys() []string
	Snapshot() map[string]T
	IndexNames() []string
	ByIndex(index, value string) ([]T, error)
	IndexKeys(index, value string) ([]string, error)
	IndexValues(index string) ([]string, error)
}

// View returns the read-only side of s.
func (s *Store[T]) View() View[T] { return View[T]{s: s} }

// NewView returns a View of r.
func NewView[T any](r Reader[T]) View[T] { return View[T]{s: r} }

// Key returns obj's key by the store's key function.
func (v View[T]) Key(obj T) (string, error) { return v.s.Key(obj) }

// ResourceVersion returns the resourceVersion the store reflects.
func (v View[T]) ResourceVersion() string { return v.s.ResourceVersion() }

// Get returns the object stored under key.
func (v View[T]) Get(key string) (T, bool) { return v.s.Get(key) }

// GetByObject returns the stored object with obj's key.
func (v View[T]) GetByObject(obj T) (T, bool, error) { return v.s.GetByObject(obj) }

// Len returns the number of objects.
func (v View[T]) Len() int { return v.s.Len() }

// List returns every object, in no particular order, in a new slice.
func (v View[T]) List() []T { return v.s.List() }

// ListKeys returns every key, in no particular order.
func (v View[T]) ListKeys() []string { return v.s.ListKeys() }

// Snapshot returns a copy of the key to object map.
func (v View[T]) Snapshot() map[string]T { return v.s.Snapshot() }

// IndexNames returns the configured index names, sorted.
func (v View[T]) IndexNames() []string { return v.s.IndexNames() }

// ByIndex returns the objects whose index function returned value.
func (v View[T]) ByIndex(index, value string) ([]T, error) { return v.s.ByIndex(index, value) }

// IndexKeys returns the keys of the objects whose index function returned value.
func (v View[T]) IndexKeys(index, value string) ([]string, error) { return v.s.IndexKeys(index, value) }

// IndexValues returns every value the named index holds an object under.
func (v View[T]) IndexValues(index string) ([]string, error) { return v.s.IndexValues(index) }
