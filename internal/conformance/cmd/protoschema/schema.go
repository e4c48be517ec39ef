package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// special are the types whose protobuf message does not map field by field to
// their JSON: each has its own kind in the simulator's decoder.
var special = map[reflect.Type]string{
	reflect.TypeFor[resource.Quantity]():    "pbQuantity",
	reflect.TypeFor[metav1.Time]():          "pbTime",
	reflect.TypeFor[metav1.MicroTime]():     "pbMicroTime",
	reflect.TypeFor[intstr.IntOrString]():   "pbIntOrString",
	reflect.TypeFor[runtime.RawExtension](): "pbRawJSON",
	reflect.TypeFor[metav1.FieldsV1]():      "pbRawJSON",
	reflect.TypeFor[metav1.TypeMeta]():      "", // inline in objects, never on the wire
}

// message is one protobuf message of the table.
type message struct {
	typ    reflect.Type
	index  int
	fields []field
}

// field is one field of a message, as the simulator's pbField spells it.
type field struct {
	json  string // JSON name; "" for an inline (embedded) message
	num   int
	kind  string // the decoder's pbKind constant; for a map, the value's
	key   string // for a map, the key's pbKind constant
	flags []string
	ref   *message // the message of a pbMessage kind
}

// walker collects the messages reachable from the roots.
type walker struct {
	byType map[reflect.Type]*message
}

var jsonMarshaler = reflect.TypeFor[json.Marshaler]()

// message returns the message for struct type t, walking its fields the first time.
func (w *walker) message(t reflect.Type) (*message, error) {
	if m := w.byType[t]; m != nil {
		return m, nil
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		return nil, fmt.Errorf("%v has its own JSON encoding but is not one of the special types", t)
	}
	m := &message{typ: t}
	w.byType[t] = m // before the fields: a type may contain itself
	for i := range t.NumField() {
		f, ok, err := w.field(t, t.Field(i))
		if err != nil {
			return nil, err
		}
		if ok {
			m.fields = append(m.fields, f)
		}
	}
	slices.SortFunc(m.fields, func(a, b field) int { return a.num - b.num })
	if err := checkNames(m); err != nil {
		return nil, err
	}
	for i := 1; i < len(m.fields); i++ {
		if m.fields[i].num == m.fields[i-1].num {
			return nil, fmt.Errorf("%v: two fields numbered %d", t, m.fields[i].num)
		}
	}
	return m, nil
}

// field describes one struct field; ok is false for a field that is not on the wire.
func (w *walker) field(parent reflect.Type, sf reflect.StructField) (f field, ok bool, err error) {
	where := parent.String() + "." + sf.Name
	tag, hasTag := sf.Tag.Lookup("protobuf")
	jsonName, jsonOpts, _ := strings.Cut(sf.Tag.Get("json"), ",")
	if !hasTag {
		if k, isSpecial := special[sf.Type]; isSpecial && k == "" {
			return f, false, nil
		}
		if jsonName == "-" || !sf.IsExported() {
			return f, false, nil
		}
		return f, false, fmt.Errorf("%s is in the JSON but has no protobuf tag", where)
	}
	if jsonName == "-" {
		return f, false, fmt.Errorf("%s is on the wire but not in the JSON", where)
	}
	parts := strings.Split(tag, ",")
	if len(parts) < 2 {
		return f, false, fmt.Errorf("%s: protobuf tag %q has no field number", where, tag)
	}
	if f.num, err = strconv.Atoi(parts[1]); err != nil || f.num <= 0 {
		return f, false, fmt.Errorf("%s: protobuf tag %q has no field number", where, tag)
	}
	f.json = jsonName
	if jsonName == "" && !sf.Anonymous {
		f.json = sf.Name // encoding/json's default name
	}
	for opt := range strings.SplitSeq(jsonOpts, ",") {
		switch opt {
		case "omitempty":
			f.flags = append(f.flags, "pbOmitEmpty")
		case "omitzero":
			f.flags = append(f.flags, "pbOmitZero")
		}
	}
	if f.json == "" {
		if sf.Type.Kind() != reflect.Struct || special[sf.Type] != "" {
			return f, false, fmt.Errorf("%s is embedded but not a message", where)
		}
		f.flags = append(f.flags, "pbInline")
	}
	if err := w.fieldType(&f, sf.Type, where); err != nil {
		return f, false, err
	}
	if err := checkOmitZero(f, where); err != nil {
		return f, false, err
	}
	return f, true, nil
}

// fieldType sets the kind, flags and ref of f from its Go type. Only the tag's field
// number is used: the generated code reads each field by its Go type, and some tags
// disagree with it (SecretVolumeSource.defaultMode says "bytes" and is read as a
// varint, ISCSIVolumeSource.portals says "opt" and is a list).
func (w *walker) fieldType(f *field, t reflect.Type, where string) error {
	switch {
	case t.Kind() == reflect.Pointer:
		f.flags = append(f.flags, "pbPointer")
		t = t.Elem()
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8:
		f.flags = append(f.flags, "pbRepeated")
		t = t.Elem()
	case t.Kind() == reflect.Map:
		f.flags = append(f.flags, "pbMap")
		if t.Key().Kind() != reflect.String {
			return fmt.Errorf("%s: map key %v is not a string", where, t.Key())
		}
		f.key = "pbString"
		t = t.Elem()
	}
	kind, err := w.valueKind(f, t, where)
	f.kind = kind
	return err
}

// valueKind is the kind of a value of type t.
func (w *walker) valueKind(f *field, t reflect.Type, where string) (string, error) {
	if k := special[t]; k != "" {
		return k, nil
	}
	switch t.Kind() {
	case reflect.String:
		return "pbString", nil
	case reflect.Bool:
		return "pbBool", nil
	case reflect.Int32:
		return "pbInt32", nil
	case reflect.Int64:
		return "pbInt64", nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "pbBytes", nil
		}
	case reflect.Struct:
		m, err := w.message(t)
		if err != nil {
			return "", err
		}
		f.ref = m
		return "pbMsg", nil
	}
	return "", fmt.Errorf("%s: unsupported type %v", where, t)
}

// checkOmitZero refuses omitzero where the decoder cannot tell zero as
// encoding/json does: on a struct, which is zero when every field is (or when its
// IsZero method says so). On pointers, lists, maps and scalars it means what
// omitempty means; on times the decoder knows IsZero.
func checkOmitZero(f field, where string) error {
	if !slices.Contains(f.flags, "pbOmitZero") {
		return nil
	}
	for _, ok := range []string{"pbPointer", "pbRepeated", "pbMap"} {
		if slices.Contains(f.flags, ok) {
			return nil
		}
	}
	switch f.kind {
	case "pbMsg", "pbQuantity", "pbIntOrString", "pbRawJSON":
		return fmt.Errorf("%s: omitzero on a %s, which the decoder cannot test for zero", where, f.kind)
	}
	return nil
}

// checkNames refuses a message whose JSON names (its inline messages' included)
// repeat: encoding/json would drop one by its embedding rules, which the decoder
// does not follow.
func checkNames(m *message) error {
	seen := map[string]bool{}
	var walk func(m *message) error
	walk = func(m *message) error {
		for _, f := range m.fields {
			if f.json == "" {
				if err := walk(f.ref); err != nil {
					return err
				}
				continue
			}
			if seen[f.json] {
				return fmt.Errorf("%v: JSON name %q appears twice", m.typ, f.json)
			}
			seen[f.json] = true
		}
		return nil
	}
	return walk(m)
}
