// Package store is the informer's local cache: a generic, indexed,
// thread-safe map of objects by key.
//
// Guarantees:
//   - Readers (Get, GetByObject, List, ListKeys, Len, ByIndex, IndexKeys,
//     IndexValues, ResourceVersion, Snapshot) run concurrently with each
//     other under a shared lock; a write holds the lock alone only to apply
//     itself (its key and index values are computed before), so each reader
//     sees one consistent state, never a half-applied write. View offers
//     readers these methods and no others.
//   - Objects are shared, not copied: what Upsert takes and what readers
//     return is the same value. Nobody may mutate it.
//   - Indexes are exact: after every write an index value maps to exactly
//     the keys of the objects whose index function returns it. Values with
//     no keys are dropped, so IndexValues lists only live values. Index
//     functions must be deterministic; if a recomputed old value is not
//     found (an object mutated in place, a function that changed its mind),
//     the store scrubs the key from that whole index rather than leak it.
//     The built-in namespace index of a store keyed by MetaKey is kept by
//     the key, which names the namespace: an update of a stored key leaves
//     it as it is.
//   - A key or index function error is returned (an *IndexError names the
//     index and key) and nothing is applied; nothing in the package panics
//     on a bad object.
//   - A relist builds a Replacement off to the side, page by page, so peak
//     memory is the old contents plus the new, not a full list held twice.
//     Commit swaps it in with one pointer assignment under the lock and
//     hands back the old contents for the caller to diff.
//   - ResourceVersion is the RV of the last Upsert, Delete, Commit or
//     SetResourceVersion given a non-empty RV (SetResourceVersion sets any).
//
// Cost: a store with only the namespace index holds about 90 bytes per
// object beyond the object itself (its key string, its map entry and its
// entry in its namespace's set). An index value held by a single key keeps
// the key inline instead of in a map of its own: a unique index such as
// one by UID costs about 60 bytes per object this way, against about 320
// with a map per value (measured by BenchmarkOverhead).
package store
