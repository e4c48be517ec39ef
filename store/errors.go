package store

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package wrap one of these (or an
// *IndexError), so callers test them with errors.Is and errors.As.
var (
	// ErrUnknownIndex is returned by ByIndex, IndexKeys and IndexValues for
	// an index name that was not configured. The message names the index.
	ErrUnknownIndex = errors.New("unknown index")

	// ErrInvalidObject is returned by MetaKey (and the built-in namespace
	// index) for an object it cannot key: nil, a nil pointer, a type without
	// GetNamespace/GetName, an empty name, or a name or namespace holding '/'.
	ErrInvalidObject = errors.New("invalid object")

	// ErrInvalidKey is returned when the key function fails or returns an
	// empty key. The empty key is refused because no object can be found
	// by it and the index buckets use "" to mean "no key".
	ErrInvalidKey = errors.New("invalid key")

	// ErrReplacementDone is returned by Replacement.Add after the replacement
	// was committed, or on a Replacement not made by Store.NewReplacement.
	ErrReplacementDone = errors.New("replacement already committed or not made by NewReplacement")
)

// IndexError says which index function failed, on which object key.
// Upsert and Replacement.Add return it (with nothing applied).
type IndexError struct {
	Index string // the index name, as given in Options.Indexers
	Key   string // the key of the object being indexed
	Err   error  // the index function's error
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("store: index %q on object %q: %v", e.Index, e.Key, e.Err)
}

func (e *IndexError) Unwrap() error { return e.Err }
