package watch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MaxNestingDepth bounds how deeply arrays and objects may nest inside one
// watch event or list body, and protobuf messages inside an object of a
// recursive type (see depth.go). Real objects nest about fifteen levels
// (managedFields is the deepest); a thousand leaves room for any custom
// resource while keeping recursive decoders far from exhausting the stack.
const MaxNestingDepth = 1000

const (
	// initialBufferSize is the framer's starting buffer: room for about a
	// dozen typical 4 KiB events per Read, so that parallel decoding finds
	// whole batches already buffered.
	initialBufferSize = 64 << 10
	// minReadSize is the least free room the framer offers a Read; below
	// it the buffer is compacted or grown first.
	minReadSize = 4 << 10
	// shrinkAfter is how many consecutive small values must pass before a
	// buffer grown for one large value drops back to its starting size.
	shrinkAfter = 64
	// maxEmptyReads is how many (0, nil) Reads in a row are taken as a
	// reader that makes no progress.
	maxEmptyReads = 100
)

// scanKind is what the framer is scanning.
type scanKind uint8

const (
	scanIdle   scanKind = iota // between values: nothing begun
	scanNested                 // an object, array or string; ends when depth returns to 0 outside a string
	scanScalar                 // a number, true, false or null; ends before the first byte that cannot belong to it
)

// structural marks the bytes that matter to the framer outside strings.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// scalarByte marks the bytes a JSON number or literal is made of.
var scalarByte = func() (t [256]bool) {
	for _, c := range []byte("0123456789+-.eEtruefalsn") {
		t[c] = true
	}
	return t
}()

// framer cuts a byte stream into complete JSON values in one pass. It
// tracks only strings, escapes and nesting; the grammar inside a value is
// left to the decoder that reads it.
//
// A value returned by frame or value aliases the framer's buffer and stays
// valid until the next call that reads (frame with mayRead, value, peek):
// frames taken with frame(false) are all valid together, which is what
// batch decoding relies on.
//
// A framer is not safe for concurrent use.
type framer struct {
	r io.Reader
	// buf[start:end] is input not yet consumed. When kind != scanIdle a
	// value begins at buf[start] and buf[start:scan] has been scanned.
	buf        []byte
	start, end int
	scan       int
	base       int64 // stream offset of buf[0]
	kind       scanKind
	depth      int  // nesting depth at buf[scan]; meaningful when kind == scanNested
	inStr      bool // buf[scan] is inside a string
	bufSize    int  // the buffer's starting size, to which it shrinks back
	limit      int  // largest value accepted, in bytes
	limitName  string
	what       string // names a value in errors: "watch event", "list body"
	small      int    // values since the buffer last had to grow
	rerr       error  // the error of the last Read, reported once the buffer is drained
	err        error  // sticky: the error that ended the framer
	// lengthPrefixed frames protobuf watch events (a 4-byte big-endian
	// length before each) instead of JSON values.
	lengthPrefixed bool
}

func newFramer(r io.Reader, limit int, limitName, what string) *framer {
	return &framer{r: r, limit: limit, limitName: limitName, what: what, bufSize: initialBufferSize}
}

// frame returns the next top-level object of a watch stream and its stream
// offset. With mayRead false it returns (nil, 0, nil) instead of reading
// when no complete object is buffered. A clean end between objects is a
// bare io.EOF.
func (f *framer) frame(mayRead bool) ([]byte, int64, error) {
	if f.lengthPrefixed {
		return f.lengthFrame(mayRead)
	}
	for f.err == nil {
		if f.kind == scanIdle {
			f.skipSpace()
			if f.start < f.end {
				if c := f.buf[f.start]; c != '{' {
					f.fail(f.start, fmt.Errorf("%w %s between events; want '{' or whitespace",
						ErrUnexpectedByte, quoteByte(c)))
					break
				}
				f.begin()
			}
		}
		if f.kind != scanIdle {
			done, err := f.advance()
			if err != nil {
				f.err = err
				break
			}
			if done {
				return f.take()
			}
		}
		if !mayRead {
			return nil, 0, nil
		}
		f.fill()
	}
	return nil, 0, f.err
}

// lengthFrame is frame for a stream of length-prefixed messages. A frame
// whose length plus prefix exceeds the limit ends the stream before any of
// it is buffered.
func (f *framer) lengthFrame(mayRead bool) ([]byte, int64, error) {
	for f.err == nil {
		if have := f.end - f.start; have >= 4 {
			size := binary.BigEndian.Uint32(f.buf[f.start:])
			if int64(size) > int64(f.limit)-4 {
				f.fail(f.start, fmt.Errorf("%w: a %d-byte frame exceeds the %d-byte limit (%s)",
					ErrFrameTooLarge, size, f.limit, f.limitName))
				break
			}
			if have-4 >= int(size) {
				f.scan = f.start + 4 + int(size)
				v, off, err := f.take()
				return v[4:], off, err
			}
		}
		// Mid-frame: the end of input now is unexpected.
		f.kind = scanNested
		if f.start == f.end {
			f.kind = scanIdle
		}
		if !mayRead {
			return nil, 0, nil
		}
		f.fill()
	}
	return nil, 0, f.err
}

// value returns the next JSON value after optional whitespace, whatever
// its kind, reading as needed.
func (f *framer) value() ([]byte, int64, error) {
	if _, err := f.peek(); err != nil {
		return nil, 0, err
	}
	c := f.buf[f.start]
	if !structural[c] && !scalarByte[c] || c == '}' || c == ']' {
		f.fail(f.start, fmt.Errorf("%w %s; want a JSON value", ErrUnexpectedByte, quoteByte(c)))
		return nil, 0, f.err
	}
	f.begin()
	for f.err == nil {
		done, err := f.advance()
		if err != nil {
			f.err = err
			break
		}
		if done {
			return f.take()
		}
		f.fill()
	}
	return nil, 0, f.err
}

// peek skips whitespace, reading as needed, and returns the next byte
// without consuming it. The end of the stream is an unexpected EOF here.
func (f *framer) peek() (byte, error) {
	for f.err == nil {
		f.skipSpace()
		if f.start < f.end {
			return f.buf[f.start], nil
		}
		f.fill()
	}
	if f.err == io.EOF {
		f.fail(f.start, fmt.Errorf("%s ended early: %w", f.what, io.ErrUnexpectedEOF))
	}
	return 0, f.err
}

// rest checks that only whitespace follows, up to a clean end of stream.
func (f *framer) rest() error {
	for f.err == nil {
		f.skipSpace()
		if f.start < f.end {
			f.fail(f.start, fmt.Errorf("%w %s after the end of the %s", ErrUnexpectedByte, quoteByte(f.buf[f.start]), f.what))
			break
		}
		f.fill()
	}
	if f.err == io.EOF {
		return nil
	}
	return f.err
}

// consume drops the byte peek returned.
func (f *framer) consume() { f.start++ }

// offset is the stream offset of the next unconsumed byte.
func (f *framer) offset() int64 { return f.base + int64(f.start) }

func (f *framer) skipSpace() {
	for f.start < f.end {
		switch f.buf[f.start] {
		case ' ', '\t', '\n', '\r':
			f.start++
		default:
			return
		}
	}
}

// begin starts scanning the value at buf[start].
func (f *framer) begin() {
	f.scan, f.depth, f.inStr = f.start, 0, false
	if scalarByte[f.buf[f.start]] {
		f.kind = scanScalar
		return
	}
	f.kind = scanNested
}

// take consumes the completed value buf[start:scan].
func (f *framer) take() ([]byte, int64, error) {
	v, off := f.buf[f.start:f.scan:f.scan], f.base+int64(f.start)
	f.start, f.kind = f.scan, scanIdle
	if len(v) > f.bufSize {
		f.small = 0
	} else {
		f.small++
	}
	return v, off, nil
}

// advance scans the buffered bytes of the current value and reports
// whether it is complete. Inside strings it skips to the next quote with
// bytes.IndexByte; a quote is escaped when an odd number of backslashes
// precede it, counted back in the buffer (the value's opening byte is never
// a backslash, so the count stays inside the value).
func (f *framer) advance() (bool, error) {
	if f.kind == scanScalar {
		return f.advanceScalar()
	}
	buf := f.buf[:f.end]
	i, depth, inStr, done := f.scan, f.depth, f.inStr, false
	for i < len(buf) && !done {
		if inStr {
			// Most strings in API objects are short: look at a few bytes
			// before paying for a call to IndexByte.
			j, window := i, min(i+16, len(buf))
			for j < window && buf[j] != '"' {
				j++
			}
			if j == window {
				k := bytes.IndexByte(buf[j:], '"')
				if k < 0 {
					i = len(buf)
					break
				}
				j += k
			}
			i = j + 1
			if !escapedQuote(buf, i-1) {
				inStr = false
				done = depth == 0 // a string value ends here
			}
			continue
		}
		for i < len(buf) && !structural[buf[i]] {
			i++
		}
		if i == len(buf) {
			break
		}
		c := buf[i]
		i++
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			if depth++; depth > MaxNestingDepth {
				f.scan = i
				return false, f.errorAt(i-1, fmt.Errorf("%w: more than %d levels", ErrNestingTooDeep, MaxNestingDepth))
			}
		default: // '}' or ']'
			depth--
			done = depth == 0
		}
	}
	f.scan, f.depth, f.inStr = i, depth, inStr
	return done, f.checkSize()
}

func (f *framer) advanceScalar() (bool, error) {
	i := f.scan
	for i < f.end && scalarByte[f.buf[i]] {
		i++
	}
	f.scan = i
	return i < f.end, f.checkSize()
}

func (f *framer) checkSize() error {
	if n := f.scan - f.start; n > f.limit {
		return f.errorAt(f.start, fmt.Errorf("%w: exceeds the %d-byte limit (%s)", ErrFrameTooLarge, f.limit, f.limitName))
	}
	return nil
}

func escapedQuote(buf []byte, q int) bool {
	k := q - 1
	for k >= 0 && buf[k] == '\\' {
		k--
	}
	return (q-1-k)%2 == 1
}

// fill reads once into the buffer after making room. When the stream has
// ended or failed and nothing more can come, it sets f.err.
func (f *framer) fill() {
	if f.rerr != nil {
		f.err = f.endError()
		return
	}
	f.makeRoom()
	for range maxEmptyReads {
		room := len(f.buf) - f.end
		n, err := f.r.Read(f.buf[f.end:])
		if n < 0 || n > room {
			f.err = fmt.Errorf("%s: reader returned %d bytes for a %d-byte buffer", f.what, n, room)
			return
		}
		f.end += n
		if err != nil {
			f.rerr = err
			if n == 0 {
				f.err = f.endError()
			}
			return
		}
		if n > 0 {
			return
		}
	}
	f.err = fmt.Errorf("%s at offset %d: %w", f.what, f.base+int64(f.end), io.ErrNoProgress)
}

// endError is what the end of input means in the current state.
func (f *framer) endError() error {
	if f.rerr == io.EOF {
		if f.kind == scanIdle {
			return io.EOF
		}
		return f.errorAt(f.start, fmt.Errorf("stream ended %d bytes into it: %w", f.end-f.start, io.ErrUnexpectedEOF))
	}
	return fmt.Errorf("reading %s at offset %d: %w", f.what, f.base+int64(f.end), f.rerr)
}

// makeRoom ensures a Read gets at least minReadSize bytes of room (or all
// the room the limit allows), compacting the buffer before growing it.
func (f *framer) makeRoom() {
	if f.buf == nil {
		f.buf = make([]byte, min(f.bufSize, f.maxBuffer()))
	}
	if f.start == f.end && f.kind == scanIdle {
		f.base += int64(f.start)
		f.start, f.end = 0, 0
		if len(f.buf) > f.bufSize && f.small >= shrinkAfter {
			f.buf = make([]byte, f.bufSize)
		}
	}
	if len(f.buf)-f.end >= minReadSize {
		return
	}
	if f.start > 0 {
		n := copy(f.buf, f.buf[f.start:f.end])
		f.base += int64(f.start)
		f.scan -= f.start
		f.start, f.end = 0, n
	}
	if len(f.buf)-f.end < minReadSize && len(f.buf) < f.maxBuffer() {
		nb := make([]byte, min(2*len(f.buf), f.maxBuffer()))
		f.end = copy(nb, f.buf[:f.end])
		f.buf = nb
		f.small = 0
	}
}

// maxBuffer holds one value one byte over the limit, which is enough to
// see that it is too large.
func (f *framer) maxBuffer() int { return f.limit + 1 }

func (f *framer) errorAt(i int, err error) *DecodeError {
	return &DecodeError{Offset: f.base + int64(i), What: f.what, Err: err}
}

func (f *framer) fail(i int, err error) { f.err = f.errorAt(i, err) }

// quoteByte shows a byte in an error message: 'x' (0x78).
func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q (0x%02x)", rune(c), c)
	}
	return fmt.Sprintf("0x%02x", c)
}

// The sentinels wrapped by DecodeError.Err; test with errors.Is.
var (
	// ErrFrameTooLarge: one event or list item is larger than its limit.
	ErrFrameTooLarge = errors.New("value too large")
	// ErrNestingTooDeep: arrays and objects nest deeper than MaxNestingDepth.
	ErrNestingTooDeep = errors.New("nesting too deep")
	// ErrUnexpectedByte: a byte that cannot start or continue the stream here.
	ErrUnexpectedByte = errors.New("unexpected byte")
	// ErrUnknownEventType: an event whose type is missing or not one of the five.
	ErrUnknownEventType = errors.New("unknown event type")
	// ErrNotList: a list body that is not a List (a Status, a Table).
	ErrNotList = errors.New("not a list")
)

// DecodeError reports input that could not be framed or decoded: where it
// starts in the stream, what was being read and what was wrong. A
// DecodeError from a Decoder ends its stream; from DecodeList it ends the
// list. Err wraps one of the sentinels above, io.ErrUnexpectedEOF or the
// JSON decoder's message.
type DecodeError struct {
	Offset int64  // byte offset in the stream of the bad value or byte
	What   string // what was being read: "watch event", "MODIFIED event", "list item 3"
	Err    error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s at offset %d: %v", e.What, e.Offset, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }
