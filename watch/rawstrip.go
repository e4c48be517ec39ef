package watch

import (
	"errors"

	"github.com/kwatch/kwatch/internal/pbwire"
)

// pbManagedFields is ObjectMeta's managedFields field number.
const pbManagedFields = 17

// WithoutManagedFields returns r without metadata.managedFields (the
// server-side apply bookkeeping, often a third of an object's bytes and
// rarely read by controllers): r itself when it has none, else a new Raw.
// The rest of the body is kept byte for byte.
func (r *Raw) WithoutManagedFields() (*Raw, error) {
	var body []byte
	var changed bool
	var err error
	if r.proto {
		body, changed, err = protoWithoutManagedFields(r.Body())
	} else {
		body, changed, err = jsonWithoutManagedFields(r.Body())
	}
	if err != nil || !changed {
		return r, err
	}
	out := new(Raw)
	if r.proto {
		err = out.Unmarshal(body)
	} else {
		err = out.UnmarshalJSON(body)
	}
	return out, err
}

// protoField is the span of one field of a protobuf message: the tag's
// first byte, the content's first byte and the end.
type protoField struct {
	num              uint64
	start, data, end int
}

// nextProtoField reads the field of b at i.
func nextProtoField(b []byte, i int) (protoField, error) {
	f := protoField{start: i}
	tag, n := pbwire.DecodeVarint(b[i:])
	if n <= 0 {
		return f, pbwire.ErrTruncated
	}
	i += n
	f.num = tag >> 3
	switch tag & 7 {
	case pbwire.Varint:
		_, n = pbwire.DecodeVarint(b[i:])
		if n <= 0 {
			return f, pbwire.ErrTruncated
		}
		i += n
	case pbwire.Fixed64:
		i += 8
	case pbwire.Fixed32:
		i += 4
	case pbwire.Bytes:
		l, n := pbwire.DecodeVarint(b[i:])
		if n <= 0 || l > uint64(len(b)-i-n) {
			return f, pbwire.ErrTruncated
		}
		i += n
		f.data = i
		i += int(l)
	default:
		return f, errors.New("protobuf wire type not supported")
	}
	if i > len(b) {
		return f, pbwire.ErrTruncated
	}
	f.end = i
	return f, nil
}

// protoWithoutManagedFields returns the message b with field 17 of its
// field 1 (metadata) removed.
func protoWithoutManagedFields(b []byte) ([]byte, bool, error) {
	var meta protoField
	found := false
	for i := 0; i < len(b); {
		f, err := nextProtoField(b, i)
		if err != nil {
			return nil, false, err
		}
		if f.num == pbMetadata && f.data > 0 {
			meta, found = f, true
		}
		i = f.end
	}
	if !found {
		return b, false, nil
	}
	kept := make([]byte, 0, meta.end-meta.data)
	dropped := false
	for i := meta.data; i < meta.end; {
		f, err := nextProtoField(b[:meta.end], i)
		if err != nil {
			return nil, false, err
		}
		if f.num == pbManagedFields {
			dropped = true
		} else {
			kept = append(kept, b[f.start:f.end]...)
		}
		i = f.end
	}
	if !dropped {
		return b, false, nil
	}
	out := make([]byte, 0, len(b)-(meta.end-meta.data)+len(kept))
	out = append(out, b[:meta.start]...)
	out = pbwire.AppendBytes(out, pbMetadata, kept)
	return append(out, b[meta.end:]...), true, nil
}

// jsonWithoutManagedFields returns the JSON object b with the member
// managedFields of its metadata removed, with its separating comma.
func jsonWithoutManagedFields(b []byte) ([]byte, bool, error) {
	s := jscan{b: b}
	s.ws()
	if s.i >= len(b) || b[s.i] != '{' {
		return nil, false, ErrRawNotObject
	}
	metaStart := -1
	err := s.object(func(key []byte) error {
		if string(key) == "metadata" && s.i < len(b) && b[s.i] == '{' {
			metaStart = s.i
		}
		return s.skip(0)
	})
	if err != nil || metaStart < 0 {
		return b, false, err
	}
	from, to, err := managedFieldsSpan(b, metaStart)
	if err != nil || from < 0 {
		return b, false, err
	}
	out := make([]byte, 0, len(b)-(to-from))
	out = append(out, b[:from]...)
	return append(out, b[to:]...), true, nil
}

// managedFieldsSpan finds the bytes to cut for the managedFields member of
// the object at b[start]: the member and the comma after it, or, for the
// last member, the comma before it. from is -1 when there is none.
func managedFieldsSpan(b []byte, start int) (from, to int, err error) {
	s := jscan{b: b, i: start + 1}
	prevComma := -1
	for {
		s.ws()
		if s.i < len(b) && b[s.i] == '}' {
			return -1, -1, nil
		}
		keyStart := s.i
		key, _, err := s.str()
		if err != nil {
			return -1, -1, err
		}
		s.ws()
		if s.i >= len(b) || b[s.i] != ':' {
			return -1, -1, s.fail("expected ':'")
		}
		s.i++
		s.ws()
		if err := s.skip(1); err != nil {
			return -1, -1, err
		}
		valueEnd := s.i
		s.ws()
		comma := s.i < len(b) && b[s.i] == ','
		if string(key) == "managedFields" {
			switch {
			case comma:
				return keyStart, s.i + 1, nil
			case prevComma >= 0:
				return prevComma, valueEnd, nil
			default:
				return keyStart, valueEnd, nil
			}
		}
		if !comma {
			return -1, -1, nil
		}
		prevComma = s.i
		s.i++
	}
}
