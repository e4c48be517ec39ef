package sim

import (
	"fmt"
	"strconv"
)

// The protobuf wire format, as far as request bodies need it: varints, tags and
// length-delimited values, read from one buffer (the whole request body) so that
// every error can name its byte offset.

// Wire types.
const (
	wireVarint     = 0
	wireFixed64    = 1
	wireBytes      = 2
	wireStartGroup = 3
	wireEndGroup   = 4
	wireFixed32    = 5
)

// maxPBDepth bounds how deeply messages (and groups in skipped fields) may nest.
// The built-in kinds nest about 12 deep (a deployment's pod template affinity
// term's label selector requirement); the bound only stops hostile input.
const maxPBDepth = 32

// pbSpan is a length-delimited value: buf[start:end] of the decoder's buffer.
type pbSpan struct{ start, end int }

// pbError is a malformed protobuf body: what was wrong, the JSON path of the field
// it was in and the byte offset in the request body.
type pbError struct {
	msg  string
	path string // "" at the top of the message
	off  int
}

func (e *pbError) Error() string {
	if e.path == "" {
		return e.msg + " (byte " + strconv.Itoa(e.off) + ")"
	}
	return e.msg + " (field " + e.path + ", byte " + strconv.Itoa(e.off) + ")"
}

// inField prefixes the error's path with a field name or an index ("[3]", `["key"]`).
func inField(err error, name string) error {
	e, ok := err.(*pbError)
	if !ok || name == "" {
		return err
	}
	switch {
	case e.path == "":
		e.path = name
	case e.path[0] == '[':
		e.path = name + e.path
	default:
		e.path = name + "." + e.path
	}
	return e
}

func errPBEOF(off int) error { return &pbError{msg: "unexpected EOF", off: off} }

// pbReader reads the fields of one message, buf[pos:end].
type pbReader struct {
	buf      []byte
	pos, end int
}

// pbTag is one field's header, and where it started.
type pbTag struct {
	num  uint64
	wire int
	at   int
}

// varint reads a base-128 varint of at most 10 bytes.
func (r *pbReader) varint() (uint64, error) {
	var v uint64
	start := r.pos
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			return 0, &pbError{msg: "proto: integer overflow", off: start}
		}
		if r.pos >= r.end {
			return 0, errPBEOF(r.pos)
		}
		b := r.buf[r.pos]
		r.pos++
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, nil
		}
	}
}

// tag reads the next field header; msg names the message for errors. ok is false
// at the end of the message.
func (r *pbReader) tag(msg string) (t pbTag, ok bool, err error) {
	if r.pos >= r.end {
		return t, false, nil
	}
	t.at = r.pos
	v, err := r.varint()
	if err != nil {
		return t, false, err
	}
	t.num, t.wire = v>>3, int(v&7)
	if t.num == 0 || t.num > 1<<29-1 {
		return t, false, &pbError{msg: fmt.Sprintf("proto: %s: illegal tag %d (wire type %d)", msg, int32(v>>3), t.wire), off: t.at}
	}
	if t.wire == wireEndGroup {
		return t, false, &pbError{msg: fmt.Sprintf("proto: %s: wiretype end group for non-group", msg), off: t.at}
	}
	return t, true, nil
}

// bytes reads a length-delimited value.
func (r *pbReader) bytes() (pbSpan, error) {
	at := r.pos
	n, err := r.varint()
	if err != nil {
		return pbSpan{}, err
	}
	if n > uint64(r.end-r.pos) {
		return pbSpan{}, &pbError{msg: fmt.Sprintf("unexpected EOF: a length of %d runs past the end of its message", n), off: at}
	}
	s := pbSpan{r.pos, r.pos + int(n)}
	r.pos = s.end
	return s, nil
}

// skip passes over the value of an unknown field, as the generated code does
// (groups included, nested at most maxPBDepth deep).
func (r *pbReader) skip(t pbTag) error {
	depth := 0
	for {
		switch t.wire {
		case wireVarint:
			if _, err := r.varint(); err != nil {
				return err
			}
		case wireFixed64, wireFixed32:
			n := 8
			if t.wire == wireFixed32 {
				n = 4
			}
			if r.end-r.pos < n {
				return errPBEOF(r.pos)
			}
			r.pos += n
		case wireBytes:
			if _, err := r.bytes(); err != nil {
				return err
			}
		case wireStartGroup:
			if depth++; depth > maxPBDepth {
				return &pbError{msg: fmt.Sprintf("proto: groups nested deeper than %d", maxPBDepth), off: t.at}
			}
		case wireEndGroup:
			if depth--; depth < 0 {
				return &pbError{msg: "proto: unexpected end of group", off: t.at}
			}
		default:
			return &pbError{msg: fmt.Sprintf("proto: illegal wireType %d", t.wire), off: t.at}
		}
		if depth == 0 {
			return nil
		}
		at := r.pos
		v, err := r.varint()
		if err != nil {
			return err
		}
		t = pbTag{num: v >> 3, wire: int(v & 7), at: at}
	}
}
