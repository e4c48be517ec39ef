package watch

import (
	"errors"
	"fmt"
	"math"
)

// The API server's protobuf encoding, as far as the engine reads it itself
// (the objects are decoded by their own generated Unmarshal methods):
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

// protoMagic starts every enveloped protobuf body.
var protoMagic = [4]byte{'k', '8', 's', 0}

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// errProtoTruncated is returned for a message that ends inside a field.
var errProtoTruncated = errors.New("protobuf message truncated")

// protoField is one field of a message: its number and wire type, and its
// value: num for varints, data for length-delimited fields.
type protoField struct {
	num  int
	wire int
	val  uint64
	data []byte
}

// protoScanner walks the fields of one message held in memory.
type protoScanner struct {
	b   []byte
	i   int
	err error
}

// next reads the next field into f; false at the end or on an error
// (then s.err is set).
func (s *protoScanner) next(f *protoField) bool {
	if s.err != nil || s.i >= len(s.b) {
		return false
	}
	tag, ok := s.varint()
	if !ok {
		return false
	}
	f.num, f.wire, f.val, f.data = int(tag>>3), int(tag&7), 0, nil
	if tag>>3 == 0 || tag>>3 > math.MaxInt32 {
		s.err = fmt.Errorf("protobuf field number %d out of range", tag>>3)
		return false
	}
	switch f.wire {
	case wireVarint:
		f.val, ok = s.varint()
	case wireFixed64:
		ok = s.skip(8)
	case wireFixed32:
		ok = s.skip(4)
	case wireBytes:
		var n uint64
		if n, ok = s.varint(); ok {
			if n > uint64(len(s.b)-s.i) {
				s.err = errProtoTruncated
				return false
			}
			f.data = s.b[s.i : s.i+int(n) : s.i+int(n)]
			s.i += int(n)
		}
	default:
		s.err = fmt.Errorf("protobuf wire type %d of field %d not supported", f.wire, f.num)
		return false
	}
	return ok
}

func (s *protoScanner) skip(n int) bool {
	if len(s.b)-s.i < n {
		s.err = errProtoTruncated
		return false
	}
	s.i += n
	return true
}

func (s *protoScanner) varint() (uint64, bool) {
	v, n := decodeVarint(s.b[s.i:])
	if n <= 0 {
		if n == 0 {
			s.err = errProtoTruncated
		} else {
			s.err = errors.New("protobuf varint longer than 10 bytes")
		}
		return 0, false
	}
	s.i += n
	return v, true
}

// eachBytesField calls fn with the number and content of every
// length-delimited field of the message b, in order.
func eachBytesField(b []byte, fn func(num int, data []byte)) error {
	s := protoScanner{b: b}
	var f protoField
	for s.next(&f) {
		if f.wire == wireBytes {
			fn(f.num, f.data)
		}
	}
	return s.err
}

// decodeVarint returns the varint at the start of b and its length: 0 when
// b ends inside it, -1 when it is longer than 10 bytes.
func decodeVarint(b []byte) (uint64, int) {
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

// protoEnvelope is a decoded runtime.Unknown: the kind of the object and
// its own message.
type protoEnvelope struct {
	apiVersion, kind string
	raw              []byte
}

// unwrapEnvelope checks the magic and reads the runtime.Unknown after it.
// raw aliases b.
func unwrapEnvelope(b []byte) (protoEnvelope, error) {
	var env protoEnvelope
	if len(b) < len(protoMagic) || [4]byte(b[:4]) != protoMagic {
		return env, errors.New(`protobuf body does not start with the "k8s\x00" magic`)
	}
	s := protoScanner{b: b[len(protoMagic):]}
	var f protoField
	for s.next(&f) {
		switch {
		case f.num == 1 && f.wire == wireBytes:
			env.apiVersion, env.kind = readTypeMeta(f.data)
		case f.num == 2 && f.wire == wireBytes:
			env.raw = f.data
		case f.num == 3 && f.wire == wireBytes && len(f.data) > 0:
			return env, fmt.Errorf("protobuf body with content encoding %q not supported", clip(string(f.data)))
		}
	}
	return env, s.err
}

// readTypeMeta reads runtime.TypeMeta; a malformed one yields empty strings,
// which the callers treat as an unexpected kind.
func readTypeMeta(b []byte) (apiVersion, kind string) {
	_ = eachBytesField(b, func(num int, data []byte) {
		switch num {
		case 1:
			apiVersion = string(data)
		case 2:
			kind = string(data)
		}
	})
	return apiVersion, kind
}

// readWatchEvent reads a metav1.WatchEvent: its type and the enveloped
// object. typ aliases nothing: known types are constants.
func readWatchEvent(b []byte) (typ EventType, obj []byte, err error) {
	hasType := false
	err = eachBytesField(b, func(num int, data []byte) {
		switch num {
		case 1:
			typ, hasType = internType(data), true
		case 2:
			obj = readRawExtension(data)
		}
	})
	switch {
	case err != nil:
		return "", nil, err
	case !hasType:
		return "", nil, fmt.Errorf("%w: the event has no type", ErrUnknownEventType)
	case !typ.Valid():
		return "", nil, fmt.Errorf("%w %q", ErrUnknownEventType, clip(string(typ)))
	case obj == nil:
		return typ, nil, errors.New("the event has no object")
	}
	return typ, obj, nil
}

// readRawExtension returns field 1 (raw) of a runtime.RawExtension, or nil.
func readRawExtension(b []byte) (raw []byte) {
	_ = eachBytesField(b, func(num int, data []byte) {
		if num == 1 && raw == nil {
			raw = data
		}
	})
	return raw
}

// readListMeta reads a metav1.ListMeta into meta.
func readListMeta(b []byte, meta *ListMeta) error {
	s := protoScanner{b: b}
	var f protoField
	for s.next(&f) {
		switch {
		case f.num == 2 && f.wire == wireBytes:
			meta.ResourceVersion = string(f.data)
		case f.num == 3 && f.wire == wireBytes:
			meta.Continue = string(f.data)
		case f.num == 4 && f.wire == wireVarint:
			n := int64(f.val)
			meta.RemainingItemCount = &n
		}
	}
	return s.err
}

// readProtoStatus reads a metav1.Status message (without envelope).
func readProtoStatus(b []byte) (wireStatus, error) {
	w := wireStatus{Kind: "Status"}
	s := protoScanner{b: b}
	var f protoField
	for s.next(&f) {
		switch {
		case f.num == 1 && f.wire == wireBytes:
			var meta ListMeta
			_ = readListMeta(f.data, &meta) // a broken metadata only loses the continue token
			w.Metadata.Continue = meta.Continue
		case f.num == 2 && f.wire == wireBytes:
			w.Status = string(f.data)
		case f.num == 3 && f.wire == wireBytes:
			w.Message = string(f.data)
		case f.num == 4 && f.wire == wireBytes:
			w.Reason = string(f.data)
		case f.num == 5 && f.wire == wireBytes:
			w.Details = readStatusDetails(f.data)
		case f.num == 6 && f.wire == wireVarint:
			w.Code = int32(f.val)
		}
	}
	return w, s.err
}

func readStatusDetails(b []byte) *statusDetails {
	d := &statusDetails{}
	s := protoScanner{b: b}
	var f protoField
	for s.next(&f) {
		switch {
		case f.num == 4 && f.wire == wireBytes && len(d.Causes) < maxStatusCauses:
			d.Causes = append(d.Causes, readStatusCause(f.data))
		case f.num == 5 && f.wire == wireVarint:
			d.RetryAfterSeconds = int32(f.val)
		}
	}
	return d
}

func readStatusCause(b []byte) (c statusCause) {
	_ = eachBytesField(b, func(num int, data []byte) {
		switch num {
		case 1:
			c.Reason = string(data)
		case 2:
			c.Message = string(data)
		case 3:
			c.Field = string(data)
		}
	})
	return c
}

// statusFromProtobuf builds the StatusError of an enveloped Status body;
// ok is false when the body is not one.
func statusFromProtobuf(body []byte) (*StatusError, bool) {
	env, err := unwrapEnvelope(body)
	if err != nil || env.kind != "Status" {
		return nil, false
	}
	w, err := readProtoStatus(env.raw)
	if err != nil {
		return nil, false
	}
	return w.toError(), true
}
