// Package jsonpatch computes and applies JSON patches (RFC 6902) over
// decoded JSON values (map[string]any, []any and scalars), with the JSON
// pointers (RFC 6901) they address. It is the one place for both: the
// webhook package turns a mutating handler's change into the patch the API
// server applies, and the CLI prints what changed in each change as a patch.
//
// Diff makes only add, remove and replace: objects are compared member by
// member in key order, so a patch is deterministic; arrays of the same
// length element by element; an array whose length changed is replaced
// whole, which keeps every index valid without a sequence diff.
package jsonpatch
