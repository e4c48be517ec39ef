// Package printers turns Kubernetes objects into what kwatch prints: the
// server's Table rows (ServerRow: a one-row Table with the object's
// metadata, cells formatted as kubectl formats them) laid out as kubectl
// lays them out, jsonpath and custom-columns templates, and streams of
// JSON, YAML or names. Every table's cells come from the server, as
// kubectl's do (pods' READY, STATUS and RESTARTS included); only a server
// that cannot print a Table gets NAME and an AGE computed here.
//
// Guarantees:
//   - Pure computations (Age, ServerRow.FallbackCells) take the current
//     time as an argument, so tests need no clock.
//   - A printer writes each row or object with one Write call on its writer,
//     so a reader of the output never sees half an object unless the writer
//     itself splits writes (a bufio.Writer flushed at shutdown never leaves
//     one half-written).
//   - Objects decoded by this package keep only what printing needs:
//     ServerRow the cells and metadata, Object metadata only, Raw the
//     server's bytes for JSON and YAML.
//   - Nothing here starts a goroutine or panics on a strange object: missing
//     fields print as kubectl prints them ("<none>", "<unknown>").
package printers
