package sim

import (
	"fmt"
	"sort"
	"strconv"
)

// pbKind is how one protobuf value is read and written as JSON.
type pbKind uint8

const (
	pbString      pbKind = iota + 1 // length-delimited -> JSON string
	pbBytes                         // length-delimited -> base64 JSON string
	pbBool                          // varint -> true or false
	pbInt32                         // varint, low 32 bits, signed
	pbInt64                         // varint, signed
	pbMsg                           // a message of pbMessages (pbField.ref)
	pbTime                          // metav1.Time: Timestamp{1 seconds} -> RFC 3339, or null when zero
	pbMicroTime                     // metav1.MicroTime: Timestamp{1 seconds, 2 nanos} -> RFC 3339 in microseconds
	pbQuantity                      // resource.Quantity: {1 string}
	pbIntOrString                   // intstr.IntOrString: {1 type, 2 intVal, 3 strVal} -> number or string
	pbRawJSON                       // metav1.FieldsV1, runtime.RawExtension: {1 raw JSON}, null when empty
)

// pbFlags are a field's cardinality and JSON omission rules.
type pbFlags uint8

const (
	pbRepeated  pbFlags = 1 << iota // a list: one wire field per element (varints may be packed)
	pbMap                           // a map: entries {1 key, 2 value}; kind is the value's
	pbPointer                       // a Go pointer: absent is nil, present is written even when zero
	pbOmitEmpty                     // json omitempty: a zero scalar, nil pointer, empty list or map is left out
	pbOmitZero                      // json omitzero: the same, and a zero time
	pbInline                        // an embedded struct: its fields are written into the parent's object
)

// pbField is one field of a message.
type pbField struct {
	name  string // JSON name; "" for pbInline
	num   int32
	kind  pbKind
	key   pbKind // a map's key kind; 0 otherwise
	flags pbFlags
	ref   uint16 // the message of a pbMsg field
}

// pbMessage is one message of the table in protoschema_gen.go.
type pbMessage struct {
	name   string    // Go type name, for errors as the generated code words them
	fields []pbField // ordered by number
}

// field returns the index of the field numbered num, or -1.
func (m *pbMessage) field(num uint64) int {
	for i := range m.fields {
		if uint64(m.fields[i].num) == num {
			return i
		}
	}
	return -1
}

// pbSlot gathers what one message's wire fields said about one of its fields.
type pbSlot struct {
	set   bool
	v     uint64   // the last varint of a singular varint field
	last  pbSpan   // the last value of a singular string or bytes field
	spans []pbSpan // every occurrence: a message's parts (merged in order), list elements, map entries
	vals  []uint64 // the elements of a list of varints
}

// pbDecoder writes the JSON of one message read from buf (see protobufToJSON). It
// is used by one goroutine for one body.
type pbDecoder struct {
	buf   []byte
	out   []byte
	limit int      // len(out) may not exceed it
	slots []pbSlot // a stack: each message being read holds len(fields) slots
	depth int
}

// object writes m, read from the concatenation of spans, as a JSON object.
func (d *pbDecoder) object(m *pbMessage, spans []pbSpan) error {
	d.out = append(d.out, '{')
	first := true
	if err := d.fields(m, spans, &first); err != nil {
		return err
	}
	d.out = append(d.out, '}')
	return nil
}

// fields writes m's fields into the object being written; first says whether a
// field was written to it yet.
func (d *pbDecoder) fields(m *pbMessage, spans []pbSpan, first *bool) error {
	if d.depth++; d.depth > maxPBDepth {
		return &pbError{msg: fmt.Sprintf("proto: messages nested deeper than %d", maxPBDepth), off: firstOffset(spans)}
	}
	defer func() { d.depth-- }()
	base := len(d.slots)
	for range m.fields {
		d.slots = append(d.slots, pbSlot{})
	}
	defer func() { d.slots = d.slots[:base] }()
	for _, s := range spans {
		if err := d.scan(m, s, base); err != nil {
			return err
		}
	}
	for i := range m.fields {
		f := &m.fields[i]
		sl := d.slots[base+i] // a copy: writing the field may grow d.slots
		if err := d.field(f, &sl, first); err != nil {
			return inField(err, f.name)
		}
		if len(d.out) > d.limit {
			return d.errTooLarge(firstOffset(spans))
		}
	}
	return nil
}

// errTooLarge says the JSON passed its bound (see pbJSONLimit) at byte off.
func (d *pbDecoder) errTooLarge(off int) error {
	return &pbError{msg: fmt.Sprintf("the object's JSON would exceed %d bytes (the simulator's bound: "+
		"16 bytes for each byte of the message, plus 64 KiB)", d.limit), off: off}
}

// firstOffset is where the first of spans starts, for errors about them all.
func firstOffset(spans []pbSpan) int {
	if len(spans) == 0 {
		return 0
	}
	return spans[0].start
}

// scan reads the wire fields of one part of a message into its slots.
func (d *pbDecoder) scan(m *pbMessage, s pbSpan, base int) error {
	r := pbReader{buf: d.buf, pos: s.start, end: s.end}
	for {
		t, ok, err := r.tag(m.name)
		if err != nil || !ok {
			return err
		}
		i := m.field(t.num)
		if i < 0 {
			if err := r.skip(t); err != nil {
				return err
			}
			continue
		}
		f := &m.fields[i]
		if err := d.scanField(&r, f, t, &d.slots[base+i]); err != nil {
			return inField(err, f.name)
		}
	}
}

// isVarint reports whether values of kind k travel as varints.
func isVarint(k pbKind) bool { return k == pbBool || k == pbInt32 || k == pbInt64 }

// scanField reads one wire occurrence of f into its slot.
func (d *pbDecoder) scanField(r *pbReader, f *pbField, t pbTag, sl *pbSlot) error {
	varint := isVarint(f.kind) && f.flags&pbMap == 0
	packed := varint && f.flags&pbRepeated != 0 && t.wire == wireBytes
	want := wireBytes
	if varint {
		want = wireVarint
	}
	if t.wire != want && !packed {
		return &pbError{msg: fmt.Sprintf("proto: wrong wireType = %d", t.wire), off: t.at}
	}
	sl.set = true
	switch {
	case packed:
		s, err := r.bytes()
		if err != nil {
			return err
		}
		pr := pbReader{buf: r.buf, pos: s.start, end: s.end}
		for pr.pos < pr.end {
			v, err := pr.varint()
			if err != nil {
				return err
			}
			sl.vals = append(sl.vals, v)
		}
	case varint:
		v, err := r.varint()
		if err != nil {
			return err
		}
		if f.flags&pbRepeated != 0 {
			sl.vals = append(sl.vals, v)
		}
		sl.v = v
	default:
		s, err := r.bytes()
		if err != nil {
			return err
		}
		if f.flags&(pbRepeated|pbMap) != 0 || isMessageKind(f.kind) {
			sl.spans = append(sl.spans, s)
		}
		sl.last = s
	}
	return nil
}

// field writes one field of a message from its slot, following encoding/json's
// rules for the Go field it stands for.
func (d *pbDecoder) field(f *pbField, sl *pbSlot, first *bool) error {
	if f.flags&pbInline != 0 {
		return d.fields(&pbMessages[f.ref], sl.spans, first)
	}
	omit := f.flags&(pbOmitEmpty|pbOmitZero) != 0
	if f.flags&(pbRepeated|pbMap|pbPointer) != 0 && !sl.set {
		if !omit {
			d.key(f.name, first)
			d.out = append(d.out, "null"...)
		}
		return nil
	}
	switch {
	case f.flags&pbMap != 0:
		d.key(f.name, first)
		return d.mapValue(f, sl.spans)
	case f.flags&pbRepeated != 0:
		d.key(f.name, first)
		return d.list(f, sl)
	}
	if f.flags&pbPointer == 0 && omit && d.isZero(f, sl) {
		return nil
	}
	d.key(f.name, first)
	if isVarint(f.kind) {
		d.varintValue(f.kind, sl.v)
		return nil
	}
	if f.kind == pbBytes && !sl.set {
		d.out = append(d.out, "null"...)
		return nil
	}
	return d.value(f.kind, f.ref, sl.spans, sl.last)
}

// isZero reports whether a singular, non-pointer field holds its zero value, for
// omitempty and omitzero. Messages are never empty to omitempty (encoding/json
// writes every struct), and the generator allows omitzero on none but times.
func (d *pbDecoder) isZero(f *pbField, sl *pbSlot) bool {
	switch f.kind {
	case pbBool, pbInt32, pbInt64:
		return (f.kind == pbInt32 && int32(sl.v) == 0) || sl.v == 0
	case pbString, pbBytes:
		return sl.last.end == sl.last.start && (f.kind == pbString || f.flags&pbOmitEmpty != 0 || !sl.set)
	case pbTime, pbMicroTime:
		if f.flags&pbOmitZero == 0 {
			return false
		}
		t, err := d.timestamp(f.kind, sl.spans)
		return err == nil && t.IsZero()
	}
	return false
}

// key writes a field name and the comma before it.
func (d *pbDecoder) key(name string, first *bool) {
	if !*first {
		d.out = append(d.out, ',')
	}
	*first = false
	d.out = appendJSONString(d.out, name)
	d.out = append(d.out, ':')
}

// varintValue writes a varint of kind k.
func (d *pbDecoder) varintValue(k pbKind, v uint64) {
	switch k {
	case pbBool:
		d.out = strconv.AppendBool(d.out, v != 0)
	case pbInt32:
		d.out = strconv.AppendInt(d.out, int64(int32(v)), 10)
	default:
		d.out = strconv.AppendInt(d.out, int64(v), 10)
	}
}

// list writes a repeated field's elements.
func (d *pbDecoder) list(f *pbField, sl *pbSlot) error {
	d.out = append(d.out, '[')
	if isVarint(f.kind) {
		for i, v := range sl.vals {
			if i > 0 {
				d.out = append(d.out, ',')
			}
			d.varintValue(f.kind, v)
		}
	}
	for i, s := range sl.spans {
		if i > 0 {
			d.out = append(d.out, ',')
		}
		if err := d.value(f.kind, f.ref, []pbSpan{s}, s); err != nil {
			return inField(err, "["+strconv.Itoa(i)+"]")
		}
		if len(d.out) > d.limit {
			return d.errTooLarge(s.start)
		}
	}
	d.out = append(d.out, ']')
	return nil
}

// pbEntry is one map entry: its key and value as read.
type pbEntry struct {
	key      string
	val      pbSpan
	v        uint64
	hasValue bool
	at       int
}

// mapValue writes a map's entries as a JSON object, sorted by key (as encoding/json
// writes Go maps); of repeated keys the last wins, as in the generated code.
func (d *pbDecoder) mapValue(f *pbField, entries []pbSpan) error {
	list := make([]pbEntry, 0, len(entries))
	for i, s := range entries {
		e, err := d.entry(f, s)
		if err != nil {
			return inField(err, "["+strconv.Itoa(i)+"]")
		}
		list = append(list, e)
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].key < list[j].key })
	d.out = append(d.out, '{')
	first := true
	for i, e := range list {
		if i+1 < len(list) && list[i+1].key == e.key {
			continue
		}
		d.key(e.key, &first)
		var err error
		switch {
		case isVarint(f.kind):
			d.varintValue(f.kind, e.v)
		case !e.hasValue && isMessageKind(f.kind):
			err = d.value(f.kind, f.ref, nil, pbSpan{})
		default:
			err = d.value(f.kind, f.ref, []pbSpan{e.val}, e.val)
		}
		if err != nil {
			return inField(err, "["+strconv.Quote(e.key)+"]")
		}
		if len(d.out) > d.limit {
			return d.errTooLarge(e.at)
		}
	}
	d.out = append(d.out, '}')
	return nil
}

// entry reads one map entry {1 key, 2 value}.
func (d *pbDecoder) entry(f *pbField, s pbSpan) (pbEntry, error) {
	e := pbEntry{at: s.start}
	r := pbReader{buf: d.buf, pos: s.start, end: s.end}
	for {
		t, ok, err := r.tag("map entry")
		if err != nil || !ok {
			return e, err
		}
		switch {
		case t.num == 1 && t.wire == wireBytes:
			k, err := r.bytes()
			if err != nil {
				return e, err
			}
			e.key = string(d.buf[k.start:k.end])
		case t.num == 2 && isVarint(f.kind) && t.wire == wireVarint:
			if e.v, err = r.varint(); err != nil {
				return e, err
			}
			e.hasValue = true
		case t.num == 2 && !isVarint(f.kind) && t.wire == wireBytes:
			if e.val, err = r.bytes(); err != nil {
				return e, err
			}
			e.hasValue = true
		case t.num == 1 || t.num == 2:
			return e, &pbError{msg: fmt.Sprintf("proto: wrong wireType = %d for map entry field %d", t.wire, t.num), off: t.at}
		default:
			if err := r.skip(t); err != nil {
				return e, err
			}
		}
	}
}
