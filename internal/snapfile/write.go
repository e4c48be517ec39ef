package snapfile

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"time"
	"unicode/utf8"

	"github.com/kwatch/kwatch/internal/ratelimit"
)

// magic opens every snapshot file: "KWSNAP" and 0x1A (the DOS end-of-file
// byte, which also stops a terminal's cat from printing the binary rest).
const magic = "KWSNAP\x1a"

// bufferSize is the write buffer and the read buffer, and the largest burst
// the pacing of WriteOptions.BytesPerSecond lets through at once.
const bufferSize = 64 << 10

// castagnoli is CRC-32C. A snapshot's checksum guards against accidental
// damage (a torn or partial write, a flipped bit, a file from an
// interrupted copy), not against someone who can write the file: they could
// recompute any unkeyed hash, SHA-256 included. CRC-32C detects every burst
// of up to 32 bits and misses random damage with odds of 2^-32, and it runs
// at memory speed on current CPUs, so checksumming a large store costs
// nothing next to the disk.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteOptions tunes Write. The zero value writes as fast as the file takes
// the bytes.
type WriteOptions struct {
	// BytesPerSecond caps the average rate at which Write hands bytes to the
	// file, so that snapshotting a large store in the background does not
	// take the disk from the rest of the process or node. Bytes are paced
	// by a token bucket (golang.org/x/time/rate) holding at most
	// min(64 KiB, BytesPerSecond) tokens, initially full: that much goes out
	// at once, the rest at BytesPerSecond, so a file of n bytes takes about
	// (n - burst) / BytesPerSecond. The fsync at the end is not paced. Zero
	// means unlimited; negative is an error.
	BytesPerSecond int
}

// Write replaces the file at path with a snapshot of header h and records,
// atomically: it writes a temporary file in path's directory (mode 0600:
// a snapshot may hold Secrets), fsyncs it, renames it over path and fsyncs
// the directory. Readers of path see the old file or the new one, never a
// part. On any error, from records, a write, or ctx being done (checked
// before every record and while pacing), it removes the temporary file and
// leaves path as it was. The one exception is a failed fsync of the
// directory after the rename, which is reported although path already
// holds the complete new file.
//
// records is read once, in order; it ends the snapshot with an error by
// yielding a non-nil error. It must yield exactly h.Count records. A zero
// h.Created is set to the current time.
//
// Write may run concurrently with other Writes and with readers of path:
// of two Writes to one path, the last rename wins, and each file is
// complete. A process that dies midway leaves its temporary file
// ("."+name+".tmp-*", next to path) behind; Write does not remove others'
// temporary files, which may belong to a running Write.
func Write(ctx context.Context, path string, h Header, records iter.Seq2[Record, error], opts WriteOptions) error {
	if h.Created.IsZero() {
		h.Created = time.Now()
	}
	hdr, err := encodeHeader(nil, h)
	if err != nil {
		return fmt.Errorf("snapfile %s: %w", path, err)
	}
	if opts.BytesPerSecond < 0 {
		return fmt.Errorf("snapfile %s: WriteOptions.BytesPerSecond is negative (%d)", path, opts.BytesPerSecond)
	}
	dir := filepath.Dir(path)
	tmp, err := writeTemp(ctx, dir, filepath.Base(path), func(w *encoder) error {
		return writeBody(ctx, w, hdr, h.Count, records)
	}, opts)
	if err != nil {
		return fmt.Errorf("snapfile %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("snapfile %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("snapfile %s: written, but syncing its directory failed: %w", path, err)
	}
	return nil
}

// writeTemp creates a temporary file in dir, has body write it, flushes
// and fsyncs it, and returns its name. On error it leaves no file behind.
func writeTemp(ctx context.Context, dir, base string, body func(*encoder) error, opts WriteOptions) (name string, err error) {
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	var out io.Writer = f
	if opts.BytesPerSecond > 0 {
		burst := min(bufferSize, opts.BytesPerSecond)
		out = &pacedWriter{ctx: ctx, w: f, lim: ratelimit.New(float64(opts.BytesPerSecond), burst), chunk: burst}
	}
	enc := &encoder{w: bufio.NewWriterSize(out, bufferSize)}
	if err := body(enc); err != nil {
		return "", err
	}
	if err := enc.w.Flush(); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return f.Name(), nil
}

// writeBody writes the whole layout of doc.go: magic, version, header,
// records and trailer.
func writeBody(ctx context.Context, w *encoder, hdr []byte, count uint64, records iter.Seq2[Record, error]) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.write([]byte(magic))
	w.uvarint(FormatVersion)
	w.uvarint(uint64(len(hdr)))
	w.write(hdr)
	var n uint64
	for r, err := range records {
		if err != nil {
			return fmt.Errorf("record %d: %w", n, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if n == count {
			return fmt.Errorf("records yield more than Header.Count (%d)", count)
		}
		if !utf8.ValidString(r.Key) {
			return fmt.Errorf("record %d: key %q is not valid UTF-8", n, r.Key)
		}
		w.uvarint(uint64(len(r.Key)))
		w.writeString(r.Key)
		w.uvarint(uint64(len(r.Data)))
		w.write(r.Data)
		if w.err != nil {
			return w.err
		}
		n++
	}
	if n != count {
		return fmt.Errorf("records yielded %d, but Header.Count is %d", n, count)
	}
	w.uvarint(count)
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], w.crc)
	w.raw(sum[:])
	return w.err
}

// An encoder writes through a buffer and checksums what it writes. Its
// first error sticks and turns later writes into no-ops.
type encoder struct {
	w   *bufio.Writer
	crc uint32
	err error
	tmp [binary.MaxVarintLen64]byte
}

func (e *encoder) write(b []byte) {
	e.crc = crc32.Update(e.crc, castagnoli, b)
	e.raw(b)
}

func (e *encoder) writeString(s string) {
	// Through a small copy: crc32.Update takes a []byte and converting the
	// whole string would allocate per record.
	for len(s) > 0 {
		n := copy(e.tmp[:], s)
		e.write(e.tmp[:n])
		s = s[n:]
	}
}

func (e *encoder) uvarint(v uint64) {
	var b [binary.MaxVarintLen64]byte
	e.write(binary.AppendUvarint(b[:0], v))
}

// raw writes b without checksumming it: the checksum itself.
func (e *encoder) raw(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

// A pacedWriter takes tokens from lim for every byte before passing it on,
// a chunk (the bucket's burst) at a time, so the file grows at the pace.
type pacedWriter struct {
	ctx   context.Context
	w     io.Writer
	lim   *ratelimit.Bucket
	chunk int
}

func (p *pacedWriter) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		c := min(len(b), p.chunk)
		if err := p.lim.Wait(p.ctx, c); err != nil {
			if ctxErr := p.ctx.Err(); ctxErr != nil {
				err = ctxErr
			}
			return n, err
		}
		m, err := p.w.Write(b[:c])
		n += m
		if err != nil {
			return n, err
		}
		b = b[c:]
	}
	return n, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		// A directory cannot be opened for syncing there; NTFS journals
		// the rename itself.
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
