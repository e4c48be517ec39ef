package snapfile

import (
	"errors"
	"fmt"
)

// ErrNotSnapshot is the error (wrapped with the file's name) for a file that
// does not start with the snapshot magic: empty, another format, random bytes.
// Test for it with errors.Is.
var ErrNotSnapshot = errors.New("not a kwatch snapshot file")

// A VersionError is a snapshot file of a format version this build does not
// read, written by a newer (or much older) kwatch. The informer treats it as
// no snapshot at all and lists.
type VersionError struct {
	Path    string // the file
	Version uint64 // the version the file declares
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("snapfile %s: format version %d, this build reads only version %d", e.Path, e.Version, FormatVersion)
}

// A CorruptError is a snapshot file that starts like one but is damaged:
// truncated, a length past the end of the file, bad UTF-8, bytes after the
// trailer, a record count or checksum that does not match.
type CorruptError struct {
	Path   string // the file
	Offset int64  // the byte offset where the damage was found
	What   string // what was wrong there, e.g. "checksum mismatch"
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("snapfile %s: corrupt at byte %d: %s", e.Path, e.Offset, e.What)
}

// A LimitError is a snapshot file, consistent so far, that declares a size
// over one of the ReadOptions limits. Nothing over the limit was allocated.
// Raise the limit named by Limit if the file is trusted.
type LimitError struct {
	Path   string // the file
	Offset int64  // where the length or count was read
	Limit  string // the ReadOptions field, e.g. "MaxRecordSize"
	Value  uint64 // what the file declares
	Max    int64  // the limit in effect
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("snapfile %s: at byte %d: %d is over ReadOptions.%s (%d)", e.Path, e.Offset, e.Value, e.Limit, e.Max)
}

// The fields a MismatchError names.
const (
	FieldServer        = "server"
	FieldResource      = "resource"
	FieldNamespace     = "namespace"
	FieldLabelSelector = "label selector"
	FieldFieldSelector = "field selector"
	FieldEncoding      = "encoding"
)

// A MismatchError says that a snapshot was taken by an informer other than
// the one loading it, in the user's terms: "snapshot is for another server".
// Check returns it for the first field, in the order of the Field constants,
// that differs.
type MismatchError struct {
	Field    string // one of the Field constants
	Snapshot string // the snapshot's value, as the message shows it
	Want     string // the loading informer's value
}

func (e *MismatchError) Error() string {
	switch e.Field {
	case FieldServer:
		return fmt.Sprintf("snapshot is for another server: %q, not %q", e.Snapshot, e.Want)
	case FieldResource:
		return fmt.Sprintf("snapshot is of another resource: %s, not %s", e.Snapshot, e.Want)
	case FieldNamespace:
		return fmt.Sprintf("snapshot is of %s, not %s", e.Snapshot, e.Want)
	case FieldEncoding:
		return fmt.Sprintf("snapshot holds objects encoded as %q, not %q", e.Snapshot, e.Want)
	}
	return fmt.Sprintf("snapshot was taken with %s %q, not %q", e.Field, e.Snapshot, e.Want)
}

// An UnsafeFileError is a snapshot path that another local user could have
// planted or changed: a symbolic link, a file not owned by the process's
// user, or one writable by its group or by others. Open refuses it before
// reading a byte, since its records and resourceVersion would become an
// informer's cache; the informer logs it and lists. Write replaces such a
// path with a file of its own and never follows a link.
type UnsafeFileError struct {
	Path string // the file
	What string // what was wrong, e.g. "is a symbolic link"
}

func (e *UnsafeFileError) Error() string {
	return fmt.Sprintf("snapfile %s: %s: refusing to load it", e.Path, e.What)
}
