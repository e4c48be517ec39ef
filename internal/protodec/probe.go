package protodec

import (
	"fmt"
	"reflect"
)

type marshaler interface{ Marshal() ([]byte, error) }

// probe checks a table against the type's generated Marshal, which is
// generated from the same .proto file as its Unmarshal: a value with one
// field set must encode a field of that number and wire type with other
// content than the zero value does (which encodes every string, number
// and message held by value, as empty or 0). A message held by value
// cannot be set without knowing its type, so for it the zero value's
// encoding must just hold the number. It returns what is wrong,
// or "" when every field agrees. The tags are what the table is built
// from, and they are written by a generator that can lag the .proto.
func probe(t reflect.Type, fields []field) (why string) {
	defer func() {
		if r := recover(); r != nil {
			why = fmt.Sprintf("its Marshal panicked on a probe: %v", r)
		}
	}()
	zero, err := tagsOf(reflect.New(t))
	if err != nil {
		return err.Error()
	}
	for num := range fields {
		f := &fields[num]
		if f.kind == kSkip {
			continue
		}
		want := tagKey{uint64(num), f.wire}
		if f.kind == kMsg {
			if !hasKey(zero, want) {
				return fmt.Sprintf("field %d is not encoded as the table expects", num)
			}
			continue
		}
		v := reflect.New(t)
		setProbe(f, v.Elem().FieldByIndex(fieldIndex(t, f.off)))
		got, err := tagsOf(v)
		if err != nil {
			return err.Error()
		}
		if c, ok := got[want]; !ok || c == zero[want] && hasKey(zero, want) {
			return fmt.Sprintf("field %d is not encoded as the table expects", num)
		}
	}
	return ""
}

type tagKey struct {
	num  uint64
	wire uint8
}

func hasKey(m map[tagKey]string, k tagKey) bool { _, ok := m[k]; return ok }

// tagsOf marshals the value v points to and returns its top-level tags,
// each with the bytes of its (last) value.
func tagsOf(v reflect.Value) (map[tagKey]string, error) {
	m, ok := v.Interface().(marshaler)
	if !ok {
		return nil, fmt.Errorf("%v has no Marshal to probe", v.Type().Elem())
	}
	b, err := m.Marshal()
	if err != nil {
		return nil, fmt.Errorf("its Marshal failed on a probe: %w", err)
	}
	out := map[tagKey]string{}
	for i := 0; i < len(b); {
		num, wire, next, ok := tag(b, i)
		if ok {
			i, ok = skip(b, next, wire)
		}
		if !ok {
			return nil, fmt.Errorf("its Marshal wrote a message the probe cannot read")
		}
		out[tagKey{num, wire}] = string(b[next:i])
	}
	return out, nil
}

// fieldIndex finds the index of the field at offset off of t.
func fieldIndex(t reflect.Type, off uintptr) []int {
	for i := range t.NumField() {
		if sf := t.Field(i); sf.Offset == off && sf.Type.Size() > 0 {
			return sf.Index
		}
	}
	panic("no field at the offset")
}

// setProbe sets v, a field of kind f.kind, to a value that is encoded.
func setProbe(f *field, v reflect.Value) {
	switch f.kind {
	case kString:
		v.SetString("x")
	case kBool:
		v.SetBool(true)
	case kInt32, kInt64:
		v.SetInt(1)
	case kStringPtr, kBoolPtr, kInt32Ptr, kInt64Ptr:
		p := reflect.New(v.Type().Elem())
		setProbe(&field{kind: f.kind - 1}, p.Elem())
		v.Set(p)
	case kMsgPtr:
		v.Set(reflect.New(v.Type().Elem()))
	case kOwn:
		switch v.Kind() {
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		case reflect.Map:
			m := reflect.MakeMap(v.Type())
			m.SetMapIndex(reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem())
			v.Set(m)
		}
	case kStringSlice:
		v.Set(reflect.Append(v, reflect.ValueOf("x").Convert(v.Type().Elem())))
	case kMsgSlice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
	case kMsgPtrSlice:
		v.Set(reflect.Append(v, reflect.New(v.Type().Elem().Elem())))
	case kStringMap, kQuantityMap, kBytesMap, kMap:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf("x").Convert(v.Type().Key()), reflect.New(v.Type().Elem()).Elem())
		v.Set(m)
	}
}
