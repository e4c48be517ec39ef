// Package snapfile reads and writes informer snapshots: a store's records
// (each an opaque encoded object and its key) and its resourceVersion in
// one file, so that an informer can resume its watch on start instead of
// relisting.
//
// Guarantees:
//   - Write replaces the file atomically (temporary file in the same
//     directory, fsync, rename, fsync of the directory). Path holds the old
//     snapshot or the complete new one, never a part; a failed or cancelled
//     Write leaves no temporary file behind.
//   - Write's I/O is bounded: a 64 KiB buffer, and optionally a rate
//     (WriteOptions.BytesPerSecond).
//   - Reading streams, in chunks of 256 KiB (or one record, when larger)
//     read by the kernel into place: a record's Data is its bytes in the
//     chunk, copied nowhere else. Resident memory is what the caller
//     keeps, plus at most 17 chunks: the chunks for the file's size (which
//     MaxFileSize bounds) are allocated when Records starts, and a
//     goroutine of their own faults their pages in just ahead of the read.
//     Every length read from the file is checked against the bytes left in
//     it and against ReadOptions' limits before anything is allocated for
//     it. A truncated, corrupt or foreign file gets an error naming the
//     file and what was wrong (ErrNotSnapshot, *VersionError, *CorruptError
//     with the offset, *LimitError with the limit), never a panic.
//   - The checksum covers every byte before it, header included, and is
//     verified at the end: records reach the caller before the file is
//     known good. Stage them and commit only when Read (or Records) returns
//     nil.
//   - Open refuses a file another local user could have planted or
//     changed (*UnsafeFileError): a symbolic link is not followed
//     (O_NOFOLLOW), and on Unix the opened file must be owned by the
//     process's effective user and not be writable by its group or by
//     others. Write never follows a link at its path: the new file is
//     created 0600 beside it and renamed over it.
//   - Check says, in the user's terms, whether a snapshot belongs to the
//     informer loading it (*MismatchError: "snapshot is for another
//     server").
//
// # File layout, format version 1
//
// Integers are unsigned LEB128 varints (encoding/binary's Uvarint: 7 bits a
// byte, low group first, high bit set on all but the last byte, at most 10
// bytes) unless said otherwise. A string is a varint byte length followed by
// that many bytes of UTF-8.
//
//	offset  size     field
//	0       7        magic: "KWSNAP" 0x1A
//	7       1-10     format version: varint, 1
//	        1-10     header length H: varint, at most 65536
//	        H        header, its fields in this order, all of it used:
//	                   string  group ("" for the core group)
//	                   string  version (the API version, "v1")
//	                   string  resource ("pods")
//	                   string  namespace ("" for all)
//	                   string  label selector
//	                   string  field selector
//	                   string  server identity
//	                   string  resourceVersion (not empty)
//	                   string  encoding of the records' data
//	                   varint  created: Unix nanoseconds, signed, zig-zag
//	                           encoded (encoding/binary's Varint)
//	                   varint  record count N
//	        ...      N records, each:
//	                   varint  key length K
//	                   K       key, UTF-8
//	                   varint  data length D
//	                   D       data
//	        1-10     trailer: record count again, varint, equal to N
//	        4        CRC-32C (Castagnoli) of every byte from offset 0 up to
//	                 here, little-endian
//	                 end of file: no byte may follow
//
// Any change to this layout gets a new format version; a reader rejects
// versions it does not know with a *VersionError rather than guess.
package snapfile
