package watch

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A snapshot keeps each Raw as a record, and a restart rebuilds the Raws
// from them. A version-2 record (what AppendRecord writes) keeps the
// results of the metadata scan beside the bytes, so that a load takes each
// Raw as it was, without reading its object again:
//
//	byte     2 (the version)
//	byte     1 for protobuf, 0 for JSON
//	varint   metadata.generation
//	uvarint  length of the namespace, then its bytes
//	uvarint  where the body starts in the data
//	uvarint  start and length in the data of the name, the resourceVersion,
//	         the uid and the labels (as span: 4 pairs)
//	...      the data, as Raw.data holds it
//
// ParseRecord still reads version 1 (a version and an encoding byte, then
// the body, whose metadata is scanned again), the form of older snapshots.
const (
	recordV1 = 1
	recordV2 = 2
)

// AppendRecord appends the Raw to dst in the form ParseRecord reads: a
// snapshot's record, version 2.
func (r *Raw) AppendRecord(dst []byte) []byte {
	var flags byte
	if r.proto {
		flags = 1
	}
	dst = append(dst, recordV2, flags)
	dst = binary.AppendVarint(dst, r.gen)
	dst = binary.AppendUvarint(dst, uint64(len(r.ns)))
	dst = append(dst, r.ns...)
	dst = binary.AppendUvarint(dst, uint64(r.body))
	for _, sp := range [...]span{r.name, r.rv, r.uid, r.lbls} {
		dst = binary.AppendUvarint(dst, uint64(sp.from))
		dst = binary.AppendUvarint(dst, uint64(sp.to-sp.from))
	}
	return append(dst, r.data...)
}

// ParseRecord rebuilds a Raw from a record AppendRecord wrote (or an older
// version-1 one), checking it: a record of a damaged file is an error,
// never a panic, and never a Raw whose reads could go out of its bytes.
// The Raw keeps b's bytes as its own, so b must not be modified afterwards
// (a snapshot reader hands each record a slice of its own).
//
// A version-2 record's metadata is taken as written: the snapshot file's
// checksum, checked before the Raws are used, is what finds damage in it.
// Its spans are checked to lie within the record (and a protobuf Raw's
// name, resourceVersion and uid within its metadata message; a JSON Raw's
// labels to be whole pairs), not read again from the object.
func ParseRecord(b []byte) (*Raw, error) {
	if len(b) < 2 || (b[0] != recordV1 && b[0] != recordV2) || b[1] > 1 {
		return nil, errors.New("watch: not an object record of version 1 or 2")
	}
	r := new(Raw)
	var err error
	switch {
	case b[0] == recordV2:
		err = r.parseV2(b[2:], b[1] == 1)
	case b[1] == 1:
		err = r.adoptProto(b[2:len(b):len(b)])
	default:
		err = r.UnmarshalJSON(b[2:])
	}
	if err != nil {
		return nil, fmt.Errorf("watch: object record: %w", err)
	}
	return r, nil
}

// adoptProto makes r the protobuf Raw of b, keeping b as its bytes.
func (r *Raw) adoptProto(b []byte) error {
	var m rawMeta
	if err := scanProtoMeta(b, &m); err != nil {
		return err
	}
	if len(b) > maxRawSize {
		return fmt.Errorf("object of %d bytes is over the %d-byte limit", len(b), maxRawSize)
	}
	*r = Raw{gen: m.gen, proto: true, data: b}
	if len(m.ns) > 0 {
		r.ns = interned.intern(m.ns)
	}
	r.name, r.rv, r.uid, r.lbls = within(b, m.name), within(b, m.rv), within(b, m.uid), within(b, m.meta)
	return nil
}

// parseV2 makes r the Raw of the version-2 record b (after its version
// and encoding bytes).
func (r *Raw) parseV2(b []byte, proto bool) error {
	rd := recordReader{b: b}
	gen := rd.varint("generation")
	ns := rd.bytes("namespace")
	body := rd.uvarint("body", " offset")
	var sp [4]span
	for i, what := range [...]string{"name", "resourceVersion", "uid", "labels"} {
		// Clamped past any record's size, so that the sum cannot overflow
		// and checkSpans refuses it.
		from, n := min(rd.uvarint(what, " start"), maxRawSize+1), min(rd.uvarint(what, " length"), maxRawSize+1)
		sp[i] = span{uint32(from), uint32(from + n)}
	}
	if rd.err != nil {
		return rd.err
	}
	data := b[rd.i:len(b):len(b)]
	if body > uint64(len(data)) || (proto && body != 0) {
		return fmt.Errorf("body offset %d in %d bytes of a %s record", body, len(data), encodingName(proto))
	}
	// The limit is the object's, as fill applies it: a JSON Raw's copies
	// before the body do not count.
	if n := len(data) - int(body); n > maxRawSize {
		return fmt.Errorf("object of %d bytes is over the %d-byte limit", n, maxRawSize)
	}
	*r = Raw{gen: gen, proto: proto, data: data, body: uint32(body), name: sp[0], rv: sp[1], uid: sp[2], lbls: sp[3]}
	if len(ns) > 0 {
		r.ns = interned.intern(ns)
	}
	return r.checkSpans()
}

// checkSpans checks that every span of a Raw made from a record lies
// where the Raw's reads expect it.
func (r *Raw) checkSpans() error {
	outer := span{0, r.body} // JSON: the copies before the body
	if r.proto {
		outer = r.lbls // the metadata message
		if !inside(r.lbls, span{0, uint32(len(r.data))}) {
			return fmt.Errorf("metadata [%d, %d) out of the record's %d bytes", r.lbls.from, r.lbls.to, len(r.data))
		}
	}
	for _, f := range [...]struct {
		what string
		sp   span
	}{{"name", r.name}, {"resourceVersion", r.rv}, {"uid", r.uid}, {"labels", r.lbls}} {
		if f.sp.from == f.sp.to && int(f.sp.to) <= len(r.data) {
			continue // empty: a Raw keeps {0, 0} for a field it lacks
		}
		if (f.what != "labels" || !r.proto) && !inside(f.sp, outer) {
			return fmt.Errorf("%s [%d, %d) out of [%d, %d)", f.what, f.sp.from, f.sp.to, outer.from, outer.to)
		}
	}
	if !r.proto {
		return r.checkJSONLabels()
	}
	return nil
}

// inside reports whether sp lies within outer.
func inside(sp, outer span) bool {
	return outer.from <= sp.from && sp.from <= sp.to && sp.to <= outer.to
}

// checkJSONLabels checks that a JSON Raw's labels are whole key, value
// pairs of uvarint-prefixed strings, as eachLabel reads them.
func (r *Raw) checkJSONLabels() error {
	b := r.data[r.lbls.from:r.lbls.to]
	for n := 0; len(b) > 0; n++ {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return fmt.Errorf("label string %d is cut or malformed", n)
		}
		b = b[k+int(l):]
		if n%2 == 0 && len(b) == 0 {
			return fmt.Errorf("label %d has a key and no value", n/2)
		}
	}
	return nil
}

func encodingName(proto bool) string {
	if proto {
		return "protobuf"
	}
	return "JSON"
}

// recordReader reads the fields of a record's head; the first error stops
// it and is kept.
type recordReader struct {
	b   []byte
	i   int
	err error
}

// uvarint reads an unsigned varint; what and part name it in an error
// (two strings, so that no name is built unless there is an error).
func (rd *recordReader) uvarint(what, part string) uint64 {
	if rd.err != nil {
		return 0
	}
	v, n := binary.Uvarint(rd.b[rd.i:])
	if n <= 0 || overlong(rd.b[rd.i:], n) {
		rd.err = fmt.Errorf("record's %s%s is cut or malformed", what, part)
		return 0
	}
	rd.i += n
	return v
}

// overlong reports whether the varint of n bytes at the start of b is
// longer than it needs to be (a last byte of zero after a continuation
// byte, as 0x80 0x00 for 0). A record is written with minimal varints, so
// such a one is malformed: accepted, it would be written back otherwise.
func overlong(b []byte, n int) bool { return n > 1 && b[n-1] == 0 }

func (rd *recordReader) varint(what string) int64 {
	if rd.err != nil {
		return 0
	}
	v, n := binary.Varint(rd.b[rd.i:])
	if n <= 0 || overlong(rd.b[rd.i:], n) {
		rd.err = fmt.Errorf("record's %s is cut or malformed", what)
		return 0
	}
	rd.i += n
	return v
}

func (rd *recordReader) bytes(what string) []byte {
	n := rd.uvarint(what, " length")
	if rd.err != nil {
		return nil
	}
	if n > uint64(len(rd.b)-rd.i) {
		rd.err = fmt.Errorf("record's %s of %d bytes is cut", what, n)
		return nil
	}
	v := rd.b[rd.i : rd.i+int(n)]
	rd.i += int(n)
	return v
}
