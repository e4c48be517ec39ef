package snapfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
)

// Defaults of the ReadOptions limits.
const (
	DefaultMaxFileSize   = 4 << 30    // 4 GiB: a million 4 KiB objects fit
	DefaultMaxRecordSize = 16 << 20   // 16 MiB, ten times the 1.5 MiB etcd takes by default
	DefaultMaxKeyLen     = 4 << 10    // 4 KiB; namespace/name is at most 317 bytes
	DefaultMaxCount      = 10_000_000 // records
)

// trailerMin is the smallest trailer: a one-byte count and the checksum.
const trailerMin = 1 + 4

// ReadOptions bounds what Open and Read accept. Every length in the file is
// checked against the bytes left in the file and against these limits
// before anything is allocated for it. The zero value uses the defaults;
// a negative limit is an error.
type ReadOptions struct {
	MaxFileSize   int64 // the file's size; 0 means DefaultMaxFileSize
	MaxRecordSize int64 // one record's Data; 0 means DefaultMaxRecordSize
	MaxKeyLen     int64 // one record's Key, in bytes; 0 means DefaultMaxKeyLen
	MaxCount      int64 // the number of records; 0 means DefaultMaxCount
}

func (o ReadOptions) withDefaults() (ReadOptions, error) {
	for _, f := range []struct {
		name string
		v    *int64
		def  int64
	}{
		{"MaxFileSize", &o.MaxFileSize, DefaultMaxFileSize},
		{"MaxRecordSize", &o.MaxRecordSize, DefaultMaxRecordSize},
		{"MaxKeyLen", &o.MaxKeyLen, DefaultMaxKeyLen},
		{"MaxCount", &o.MaxCount, DefaultMaxCount},
	} {
		switch {
		case *f.v < 0:
			return o, fmt.Errorf("snapfile: ReadOptions.%s is negative (%d)", f.name, *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	return o, nil
}

// A Reader reads one snapshot file: Open reads and checks everything up to
// the records, Header returns what it found, Records streams the records
// and verifies the checksum. A Reader is not safe for concurrent use; its
// zero value is not usable.
type Reader struct {
	f      *os.File // nil when reading from memory
	d      decoder
	h      Header
	called bool // Records has been called
}

// Open opens the snapshot at path and reads its header, so that the caller
// can Check it (and size its staging) before reading any record. The
// header is not yet verified by the checksum, which covers the whole file:
// only a nil error from Records makes it trustworthy. The caller must Close
// the Reader.
//
// Open refuses, with an *UnsafeFileError, a path that another local user
// could have planted or changed: a symbolic link (it is not followed), and
// on Unix a file not owned by the process's effective user or writable by
// its group or by others.
//
// Errors name the file: ErrNotSnapshot (wrapped), *VersionError,
// *CorruptError, *LimitError, *UnsafeFileError, or the error from opening
// or reading it.
func Open(path string, opts ReadOptions) (*Reader, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	f, st, err := openSafe(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > opts.MaxFileSize {
		err = &LimitError{Path: path, Limit: "MaxFileSize", Value: uint64(st.Size()), Max: opts.MaxFileSize}
	}
	var r *Reader
	if err == nil {
		// Limited to the size seen now: bytes appended later are not read.
		r, err = newReader(path, io.LimitReader(f, st.Size()), st.Size(), opts)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	r.f = f
	return r, nil
}

// newReader reads the magic, format version and header from src, which
// holds size bytes.
func newReader(path string, src io.Reader, size int64, opts ReadOptions) (*Reader, error) {
	r := &Reader{d: decoder{r: newChunkReader(src, size), path: path, size: size, opts: opts}}
	d := &r.d
	if err := d.magic(); err != nil {
		return nil, err
	}
	version, err := d.uvarint("the format version")
	if err != nil {
		return nil, err
	}
	if version != FormatVersion {
		return nil, &VersionError{Path: path, Version: version}
	}
	start := d.off
	hl, err := d.uvarint("the header length")
	if err != nil {
		return nil, err
	}
	if hl > maxHeaderSize {
		return nil, d.corrupt(start, fmt.Sprintf("header length %d is over the limit of %d", hl, maxHeaderSize))
	}
	if int64(hl) > d.remaining() {
		return nil, d.corrupt(start, fmt.Sprintf("header length %d is past the end of the file (%d bytes left)", hl, d.remaining()))
	}
	hdr, err := d.take(int(hl), "the header")
	if err != nil {
		return nil, err
	}
	h, cerr := decodeHeader(hdr, d.off-int64(hl))
	if cerr != nil {
		cerr.Path = path
		return nil, cerr
	}
	if h.Count > uint64(opts.MaxCount) {
		return nil, &LimitError{Path: path, Offset: d.off - int64(hl), Limit: "MaxCount", Value: h.Count, Max: opts.MaxCount}
	}
	// Each record takes at least two bytes (two empty lengths).
	if left := d.remaining() - trailerMin; left < 0 || h.Count > uint64(left)/2 {
		return nil, d.corrupt(d.off, fmt.Sprintf("%d records cannot fit in the %d bytes left", h.Count, d.remaining()))
	}
	r.h = h
	return r, nil
}

// magic reads the magic: a file that does not start with it is not a
// snapshot, one that stops inside it is a truncated one.
func (d *decoder) magic() error {
	m, err := d.r.view(len(magic))
	n := len(m)
	d.hash(m)
	d.off += int64(n)
	switch {
	case n > 0 && n < len(magic) && bytes.Equal(m, []byte(magic[:n])):
		return d.corrupt(int64(n), "truncated in the magic")
	case n == len(magic) && string(m) == magic:
		return nil
	case err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("snapfile %s: %w", d.path, err)
	}
	return fmt.Errorf("snapfile %s: %w", d.path, ErrNotSnapshot)
}

// Header returns the header Open read. Until Records returns nil it is not
// verified.
func (r *Reader) Header() Header { return r.h }

// Size returns the file's size in bytes, as Open found it.
func (r *Reader) Size() int64 { return r.d.size }

// trailer reads the count and the checksum and checks that nothing follows.
func (r *Reader) trailer() error {
	d := &r.d
	start := d.off
	n, err := d.uvarint("the trailer")
	if err != nil {
		return err
	}
	if n != r.h.Count {
		return d.corrupt(start, fmt.Sprintf("trailer counts %d records, header %d", n, r.h.Count))
	}
	want := d.crc
	start = d.off
	sum, err := d.r.view(4)
	d.off += int64(len(sum))
	if err != nil {
		return d.readErr(start, "the checksum", err)
	}
	if got := binary.LittleEndian.Uint32(sum); got != want {
		return d.corrupt(start, fmt.Sprintf("checksum mismatch: the file says %08x, its contents sum to %08x", got, want))
	}
	if d.off != d.size {
		return d.corrupt(d.off, fmt.Sprintf("%d bytes after the trailer", d.size-d.off))
	}
	return nil
}

// Close closes the file.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	return r.f.Close()
}

// Read opens the snapshot at path, calls each for every record and verifies
// the file, and returns its header: the one-call form of Open, Records and
// Close. The warning of Records holds: stage the records, commit them only
// if Read returns nil. The returned header is the file's whenever it could
// be read, even with an error (say for logging its resourceVersion), and
// then unverified.
func Read(path string, opts ReadOptions, each func(Record) error) (Header, error) {
	r, err := Open(path, opts)
	if err != nil {
		return Header{}, err
	}
	defer r.Close()
	return r.h, r.Records(each)
}

// A decoder reads the layout of doc.go from a source of known size read
// in chunks, tracking the offset and checksumming what it consumes.
type decoder struct {
	r    *chunkReader
	path string
	opts ReadOptions
	size int64  // bytes in the source
	off  int64  // bytes consumed
	crc  uint32 // CRC-32C of the bytes consumed
}

func (d *decoder) remaining() int64 { return d.size - d.off }

func (d *decoder) hash(b []byte) { d.crc = crc32.Update(d.crc, castagnoli, b) }

// ReadByte reads and checksums one byte.
func (d *decoder) ReadByte() (byte, error) {
	c, err := d.r.ReadByte()
	if err != nil {
		return 0, err
	}
	d.crc = crc32.Update(d.crc, castagnoli, d.r.buf[d.r.pos-1:d.r.pos])
	d.off++
	return c, nil
}

// uvarint reads a varint; what names it for errors.
func (d *decoder) uvarint(what string) (uint64, error) {
	start := d.off
	v, err := d.rawUvarint()
	if err != nil {
		return 0, d.readErr(start, what, err)
	}
	return v, nil
}

// Varints the decoder refuses: one of more than 64 bits, and one longer
// than it needs to be (its last byte is 0), which no writer of the format
// writes and which would give one file's number two spellings.
var (
	errOverflow = errors.New("varint overflows 64 bits")
	errOverlong = errors.New("varint is longer than its value needs")
)

// rawUvarint is binary.ReadUvarint, written out to tell an overflow apart
// from a read error without matching an unexported error, and to refuse an
// overlong varint.
func (d *decoder) rawUvarint() (uint64, error) {
	var v uint64
	for i := 0; ; i++ {
		c, err := d.ReadByte()
		if err != nil {
			return 0, err
		}
		if i == binary.MaxVarintLen64-1 && c > 1 {
			return 0, errOverflow
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			if c == 0 && i > 0 {
				return 0, errOverlong
			}
			return v, nil
		}
	}
}

// length reads a record's key or data length (what) and checks it against
// the bytes left and the limit named limitName, before the caller
// allocates for it.
func (d *decoder) length(what, limitName string, max int64) (int, error) {
	start := d.off
	n, err := d.rawUvarint()
	if err != nil {
		return 0, d.readErr(start, "a "+what+" length", err)
	}
	if n > uint64(d.remaining()) {
		return 0, d.corrupt(start, fmt.Sprintf("%s length %d is past the end of the file (%d bytes left)", what, n, d.remaining()))
	}
	if n > uint64(max) {
		return 0, &LimitError{Path: d.path, Offset: start, Limit: limitName, Value: n, Max: max}
	}
	return int(n), nil
}

// take consumes n bytes, in place (see chunkReader.view); what names them
// for errors.
func (d *decoder) take(n int, what string) ([]byte, error) {
	b, err := d.r.view(n)
	d.hash(b)
	d.off += int64(len(b))
	if err != nil {
		return nil, d.readErr(d.off, what, err)
	}
	return b, nil
}

// readErr turns a read error at off into a *CorruptError for a short file
// or a varint it refuses, or names the file in an I/O error.
func (d *decoder) readErr(off int64, what string, err error) error {
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return d.corrupt(off, "truncated in "+what)
	case errors.Is(err, errOverflow), errors.Is(err, errOverlong):
		return d.corrupt(off, what+": "+err.Error())
	}
	return fmt.Errorf("snapfile %s: reading %s at byte %d: %w", d.path, what, off, err)
}

func (d *decoder) corrupt(off int64, what string) *CorruptError {
	return &CorruptError{Path: d.path, Offset: off, What: what}
}
