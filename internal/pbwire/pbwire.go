// Package pbwire reads and writes the protobuf wire format as far as the
// Kubernetes API server's protobuf encoding needs it outside the objects'
// own generated code: the "k8s\x00" envelope (runtime.Unknown), type meta,
// raw extensions and a scanner over the fields of one message held in
// memory.
//
// The encoding:
//
//   - A list, object or Status body is the 4-byte magic "k8s\x00" followed
//     by a runtime.Unknown message: 1 typeMeta {1 apiVersion, 2 kind},
//     2 raw (the object's own message), 3 contentEncoding, 4 contentType.
//   - A watch stream is a sequence of frames, each a 4-byte big-endian
//     length and a metav1.WatchEvent message (no magic, no envelope):
//     1 type, 2 object {1 raw}, where raw is an enveloped body as above.
//   - Every list message is 1 metadata (ListMeta: 2 resourceVersion,
//     3 continue, 4 remainingItemCount) and 2 items, one field per item.
//   - Status is 1 metadata (ListMeta), 2 status, 3 message, 4 reason,
//     5 details {1 name, 2 group, 3 kind, 4 causes {1 reason, 2 message,
//     3 field}, 5 retryAfterSeconds, 6 uid}, 6 code.
package pbwire

import (
	"errors"
	"fmt"
	"math"
)

// Magic starts every enveloped protobuf body.
var Magic = [4]byte{'k', '8', 's', 0}

// Protobuf wire types.
const (
	Varint  = 0
	Fixed64 = 1
	Bytes   = 2
	Fixed32 = 5
)

// ErrTruncated is returned for a message that ends inside a field.
var ErrTruncated = errors.New("protobuf message truncated")

// Field is one field of a message: its number and wire type, and its
// value: Val for varints, Data for length-delimited fields.
type Field struct {
	Num  int
	Wire int
	Val  uint64
	Data []byte
}

// Scanner walks the fields of one message held in memory.
type Scanner struct {
	b   []byte
	i   int
	err error
}

// NewScanner returns a Scanner over the message b.
func NewScanner(b []byte) Scanner { return Scanner{b: b} }

// Err is the error that stopped Next, if any.
func (s *Scanner) Err() error { return s.err }

// Next reads the next field into f; false at the end or on an error
// (then Err is set). f.Data aliases the message.
func (s *Scanner) Next(f *Field) bool {
	if s.err != nil || s.i >= len(s.b) {
		return false
	}
	tag, ok := s.varint()
	if !ok {
		return false
	}
	f.Num, f.Wire, f.Val, f.Data = int(tag>>3), int(tag&7), 0, nil
	if tag>>3 == 0 || tag>>3 > math.MaxInt32 {
		s.err = fmt.Errorf("protobuf field number %d out of range", tag>>3)
		return false
	}
	switch f.Wire {
	case Varint:
		f.Val, ok = s.varint()
	case Fixed64:
		ok = s.skip(8)
	case Fixed32:
		ok = s.skip(4)
	case Bytes:
		var n uint64
		if n, ok = s.varint(); ok {
			if n > uint64(len(s.b)-s.i) {
				s.err = ErrTruncated
				return false
			}
			f.Data = s.b[s.i : s.i+int(n) : s.i+int(n)]
			s.i += int(n)
		}
	default:
		s.err = fmt.Errorf("protobuf wire type %d of field %d not supported", f.Wire, f.Num)
		return false
	}
	return ok
}

func (s *Scanner) skip(n int) bool {
	if len(s.b)-s.i < n {
		s.err = ErrTruncated
		return false
	}
	s.i += n
	return true
}

func (s *Scanner) varint() (uint64, bool) {
	v, n := DecodeVarint(s.b[s.i:])
	if n <= 0 {
		if n == 0 {
			s.err = ErrTruncated
		} else {
			s.err = errors.New("protobuf varint longer than 10 bytes")
		}
		return 0, false
	}
	s.i += n
	return v, true
}

// EachBytesField calls fn with the number and content of every
// length-delimited field of the message b, in order.
func EachBytesField(b []byte, fn func(num int, data []byte)) error {
	s := NewScanner(b)
	var f Field
	for s.Next(&f) {
		if f.Wire == Bytes {
			fn(f.Num, f.Data)
		}
	}
	return s.err
}

// DecodeVarint returns the varint at the start of b and its length: 0 when
// b ends inside it, -1 when it is longer than 10 bytes.
func DecodeVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b); i++ {
		if i == 10 {
			return 0, -1
		}
		c := b[i]
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}
