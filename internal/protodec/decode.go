package protodec

import (
	"fmt"
	"reflect"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Decode decodes the message b into the zero value of p's type at ptr.
// Within b, fields merge as the generated Unmarshal merges them (a message
// given twice, a repeated field's entries apart), but a value that is not
// zero is not merged into as that code would: an element appended to a
// slice of messages with room past its length keeps what the room held,
// where the generated code appends a zero element. With alias, decoded
// strings point into b, which must then never change and stays in memory
// as long as any of them does; bytes fields are always copied. An error
// means the value is spoilt and b must be decoded again by the generated
// code: either b is malformed, which that code reports, or it holds what
// this package leaves to that code (see the package doc).
func (p *Plan) Decode(b []byte, ptr unsafe.Pointer, alias bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("protodec: decoding %v panicked: %v", p.typ, r)
		}
	}()
	d := decoder{alias: alias}
	return d.message(p, b, ptr)
}

// decoder holds what one Decode call decodes with.
type decoder struct{ alias bool }

// str returns b's bytes as a string: pointing into b when aliasing.
func (d *decoder) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if d.alias {
		return unsafe.String(&b[0], len(b))
	}
	return string(b)
}

// message decodes the message b into the value at ptr.
//
// Most tags and lengths are one byte (fields 1 to 15, lengths under 128):
// those are read here, the longer ones by tag, varint and span, which read
// every form.
func (d *decoder) message(p *Plan, b []byte, ptr unsafe.Pointer) error {
	if p.own != nil {
		return p.own(ptr, b)
	}
	fields := p.fields
	for i := 0; i < len(b); {
		var num uint64
		var wire uint8
		next := i + 1
		if c := b[i]; c >= 1<<3 && c < 0x80 {
			num, wire = uint64(c>>3), c&7
		} else {
			var ok bool
			if num, wire, next, ok = tag(b, i); !ok {
				return errNotCanonical
			}
		}
		if num >= uint64(len(fields)) || fields[num].kind == kSkip {
			var ok bool
			if i, ok = skip(b, next, wire); !ok {
				return errNotCanonical
			}
			continue
		}
		f := &fields[num]
		if wire != f.wire {
			return errNotCanonical
		}
		fp := unsafe.Add(ptr, f.off)
		if wire == wireVarint {
			v, after, ok := varint(b, next)
			if !ok {
				return errNotCanonical
			}
			setVarint(f.kind, fp, v)
			i = after
			continue
		}
		var from, to int
		if next < len(b) && b[next] < 0x80 {
			from, to = next+1, next+1+int(b[next])
			if to > len(b) {
				return errNotCanonical
			}
		} else {
			var ok bool
			if from, to, ok = span(b, next); !ok {
				return errNotCanonical
			}
		}
		if f.kind == kString {
			*(*string)(fp) = d.str(b[from:to:to])
		} else if err := d.bytesField(f, fp, b, i, from, to); err != nil {
			return err
		}
		i = to
	}
	return nil
}

// setVarint stores a varint field's value as the generated code converts
// it: a bool is v != 0, an int32 v's low 32 bits.
func setVarint(k kind, fp unsafe.Pointer, v uint64) {
	switch k {
	case kBool:
		*(*bool)(fp) = v != 0
	case kBoolPtr:
		x := v != 0
		*(**bool)(fp) = &x
	case kInt32:
		*(*int32)(fp) = int32(v)
	case kInt32Ptr:
		x := int32(v)
		*(**int32)(fp) = &x
	case kInt64:
		*(*int64)(fp) = int64(v)
	case kInt64Ptr:
		x := int64(v)
		*(**int64)(fp) = &x
	}
}

// bytesField decodes the length-delimited field f whose tag starts at
// b[at:] and whose content is b[from:to].
func (d *decoder) bytesField(f *field, fp unsafe.Pointer, b []byte, at, from, to int) error {
	data := b[from:to:to]
	switch f.kind {
	case kString:
		*(*string)(fp) = d.str(data)
	case kStringPtr:
		s := d.str(data)
		*(**string)(fp) = &s
	case kStringSlice:
		s := (*[]string)(fp)
		if cap(*s) == 0 {
			*s = make([]string, 0, run(b, at))
		}
		*s = append(*s, d.str(data))
	case kMsg:
		return d.message(f.msg, data, fp)
	case kOwn:
		// The generated code makes a nil slice or map empty first.
		if v := reflect.NewAt(f.typ, fp).Elem(); v.IsNil() {
			if v.Kind() == reflect.Map {
				v.Set(reflect.MakeMap(f.typ))
			} else {
				v.Set(reflect.MakeSlice(f.typ, 0, 0))
			}
		}
		return d.message(f.msg, data, fp)
	case kMsgPtr:
		pp := (*unsafe.Pointer)(fp)
		if *pp == nil {
			*pp = f.msg.typ2.UnsafeNew()
		}
		return d.message(f.msg, data, *pp)
	case kMsgSlice:
		return d.message(f.msg, data, d.appendElem(f, fp, b, at))
	case kMsgPtrSlice:
		e := f.msg.typ2.UnsafeNew()
		*(*unsafe.Pointer)(d.appendElem(f, fp, b, at)) = e
		return d.message(f.msg, data, e)
	case kStringMap:
		return d.stringMapEntry(fp, data, b, at)
	case kQuantityMap:
		return d.quantityMapEntry(f, fp, data, b, at)
	case kBytesMap:
		return d.bytesMapEntry(fp, data, b, at)
	case kMap:
		return d.mapEntry(f, fp, data, b, at)
	}
	return nil
}

// sliceHeader is the layout of every Go slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// appendElem adds a zero element to the slice of f at fp and returns it.
// An empty slice is made as long as the run of entries starting at b[at:];
// a full one doubles.
func (d *decoder) appendElem(f *field, fp unsafe.Pointer, b []byte, at int) unsafe.Pointer {
	h := (*sliceHeader)(fp)
	switch {
	case h.cap == 0:
		made := (*sliceHeader)(f.slice.UnsafeMakeSlice(0, run(b, at)))
		h.data, h.cap = made.data, made.cap
	case h.len == h.cap: // entries of the field apart from its run: rare
		grown := reflect.MakeSlice(f.typ, h.len, 2*h.cap)
		old := reflect.NewAt(f.typ, fp).Elem()
		reflect.Copy(grown, old)
		old.Set(grown)
	}
	// The element past len is zero: every slice here was made empty and
	// only ever appended to.
	e := unsafe.Add(h.data, uintptr(h.len)*f.size)
	h.len++
	return e
}

// entry reads a map entry's key (field 1) and value (field 2); absent, each
// is empty. A key or value of another wire type is left to the generated
// code; other fields are skipped, as it skips them. With msg, the value is
// a message, and one given twice is left to the generated code too: it
// decodes every one (the last is kept), so an earlier one that does not
// decode is its error, which decoding the last alone would miss.
func entry(data []byte, msg bool) (key, val []byte, hasVal bool, err error) {
	for i := 0; i < len(data); {
		num, wire, next, ok := tag(data, i)
		if !ok {
			return nil, nil, false, errNotCanonical
		}
		if num != 1 && num != 2 {
			if i, ok = skip(data, next, wire); !ok {
				return nil, nil, false, errNotCanonical
			}
			continue
		}
		if wire != wireBytes {
			return nil, nil, false, errNotCanonical
		}
		from, to, ok := span(data, next)
		if !ok {
			return nil, nil, false, errNotCanonical
		}
		switch {
		case num == 1:
			key = data[from:to:to]
		case msg && hasVal:
			return nil, nil, false, errNotCanonical
		default:
			val, hasVal = data[from:to:to], true
		}
		i = to
	}
	return key, val, hasVal, nil
}

// stringMapEntry adds one entry to the map[string]string at fp, made as
// large as the run of entries starting at b[at:].
func (d *decoder) stringMapEntry(fp unsafe.Pointer, data, b []byte, at int) error {
	m := (*map[string]string)(fp)
	if *m == nil {
		*m = make(map[string]string, mapSize(b, at))
	}
	k, v, _, err := entry(data, false)
	if err != nil {
		return err
	}
	(*m)[d.str(k)] = d.str(v)
	return nil
}

// bytesMapEntry adds one entry to the map of []byte values at fp, made as
// large as the run of entries starting at b[at:]. A value is copied, and
// never nil: an absent one is empty.
func (d *decoder) bytesMapEntry(fp unsafe.Pointer, data, b []byte, at int) error {
	m := (*map[string][]byte)(fp)
	if *m == nil {
		*m = make(map[string][]byte, mapSize(b, at))
	}
	k, v, _, err := entry(data, false)
	if err != nil {
		return err
	}
	(*m)[d.str(k)] = append(make([]byte, 0, len(v)), v...)
	return nil
}

// quantityMapEntry adds one entry to the map of resource.Quantity values
// at fp (a resource list), made as large as the run of entries starting
// at b[at:].
func (d *decoder) quantityMapEntry(f *field, fp unsafe.Pointer, data, b []byte, at int) error {
	m := (*map[string]resource.Quantity)(fp)
	if *m == nil {
		*m = make(map[string]resource.Quantity, mapSize(b, at))
	}
	k, v, hasVal, err := entry(data, true)
	if err != nil {
		return err
	}
	var q resource.Quantity
	if hasVal {
		if err := quantityOwn(unsafe.Pointer(&q), v); err != nil {
			return err
		}
	}
	(*m)[d.str(k)] = q
	return nil
}

// mapEntry adds one entry to the map of f at fp: a value of a string type,
// or a message decoded into a zero value (a value given twice is the last).
func (d *decoder) mapEntry(f *field, fp unsafe.Pointer, data, b []byte, at int) error {
	m := reflect.NewAt(f.typ, fp).Elem()
	if m.IsNil() {
		m.Set(reflect.MakeMapWithSize(f.typ, mapSize(b, at)))
	}
	k, v, hasVal, err := entry(data, f.msg != nil)
	if err != nil {
		return err
	}
	key := reflect.New(f.typ.Key()).Elem()
	key.SetString(d.str(k))
	val := reflect.New(f.typ.Elem())
	switch {
	case f.msg != nil && hasVal:
		if err := d.message(f.msg, v, val.UnsafePointer()); err != nil {
			return err
		}
	case f.msg == nil:
		val.Elem().SetString(d.str(v))
	}
	m.SetMapIndex(key, val.Elem())
	return nil
}
