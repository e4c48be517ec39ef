package protodec

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/modern-go/reflect2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kind is how a field's value is decoded.
type kind uint8

const (
	kSkip        kind = iota // not a field of the type: skipped as unknown
	kString                  // string (or a named string type)
	kStringPtr               // *string
	kStringSlice             // []string, repeated
	kBool                    // bool, varint
	kBoolPtr                 // *bool
	kInt32                   // int32, varint
	kInt32Ptr                // *int32
	kInt64                   // int64, varint
	kInt64Ptr                // *int64
	kMsg                     // a struct value: msg
	kOwn                     // a named slice or map that is a message: msg decodes it by its own Unmarshal
	kMsgPtr                  // *struct
	kMsgSlice                // []struct, repeated
	kMsgPtrSlice             // []*struct, repeated
	kStringMap               // a map of string keys and string values
	kQuantityMap             // a map of string keys and resource.Quantity values
	kBytesMap                // a map of string keys and []byte values
	kMap                     // any other map of string keys to strings or messages
)

// field is one field of a planned type.
type field struct {
	kind  kind
	wire  uint8
	off   uintptr
	msg   *Plan                     // the message (element, map value) type's plan
	typ   reflect.Type              // the field's type, for the slices and maps it makes
	size  uintptr                   // kMsgSlice, kMsgPtrSlice: the element's size
	slice *reflect2.UnsafeSliceType // kMsgSlice, kMsgPtrSlice: makes the slice
}

// Plan decodes one struct type. A Plan is immutable once built and safe
// for concurrent use.
type Plan struct {
	typ  reflect.Type
	typ2 reflect2.Type // allocates values of typ
	// fields is indexed by field number; its length is the largest
	// number plus one.
	fields []field
	// own is the type's own Unmarshal, set when the type decodes that way
	// (then fields is nil).
	own func(unsafe.Pointer, []byte) error
	// why says why the type decodes with its own Unmarshal.
	why string
}

// Table reports whether p decodes from its table, rather than by its
// type's own Unmarshal.
func (p *Plan) Table() bool { return p.own == nil }

type unmarshaler interface{ Unmarshal([]byte) error }

// handwritten are the types of k8s.io/api and k8s.io/apimachinery whose
// Unmarshal is written by hand rather than generated from their tags (the
// only ones in v0.37.2: quantity_proto.go, time_proto.go,
// micro_time_proto.go, fieldsv1.go): they decode with their own, always.
// FieldsV1 is the reason this list exists: it is fully tagged, yet its
// Unmarshal is its own.
var handwritten = map[reflect.Type]bool{
	reflect.TypeFor[resource.Quantity](): true,
	reflect.TypeFor[metav1.Time]():       true,
	reflect.TypeFor[metav1.MicroTime]():  true,
	reflect.TypeFor[metav1.FieldsV1]():   true,
}

var (
	plans        sync.Map // reflect.Type -> *Plan, nil for none
	typeMeta     = reflect.TypeFor[metav1.TypeMeta]()
	stringType   = reflect.TypeFor[string]()
	quantityType = reflect.TypeFor[resource.Quantity]()
	timeType     = reflect.TypeFor[metav1.Time]()
	bytesType    = reflect.TypeFor[[]byte]()
	planMu       sync.Mutex
)

// For returns the plan of the struct type t, or nil when t has neither a
// table nor an Unmarshal of its own.
func For(t reflect.Type) *Plan {
	if p, ok := plans.Load(t); ok {
		return p.(*Plan)
	}
	planMu.Lock()
	defer planMu.Unlock()
	b := builder{building: map[reflect.Type]*Plan{}}
	p := b.plan(t)
	for t, p := range b.building {
		plans.LoadOrStore(t, p)
	}
	got, _ := plans.LoadOrStore(t, p)
	return got.(*Plan)
}

// builder builds the plans of one type and the types it holds.
type builder struct {
	building map[reflect.Type]*Plan // nil value: t has no plan
}

// plan returns t's plan, building it (and those of what it holds) unless
// it is cached or being built.
func (b *builder) plan(t reflect.Type) *Plan {
	if p, ok := plans.Load(t); ok {
		return p.(*Plan)
	}
	if p, ok := b.building[t]; ok {
		return p
	}
	own := ownOf(t)
	if t.Kind() != reflect.Struct {
		// A named slice or map with an Unmarshal of its own (metav1.Verbs)
		// is a message of its own; any other is not a message.
		var p *Plan
		if own != nil {
			p = &Plan{typ: t, typ2: reflect2.Type2(t), own: own, why: "it is not a struct"}
		}
		b.building[t] = p
		return p
	}
	switch t {
	case quantityType:
		own = quantityOwn
	case timeType:
		own = timeOwn
	}
	p := &Plan{typ: t, typ2: reflect2.Type2(t), own: own}
	b.building[t] = p
	switch {
	case own == nil:
		b.building[t] = nil
		return nil
	case handwritten[t]:
		p.why = "its Unmarshal is handwritten"
		return p
	case !generatedPackage(t.PkgPath()):
		p.why = "it is not a type of k8s.io/api or k8s.io/apimachinery"
		return p
	}
	fields, why := b.fields(t)
	if why == "" {
		why = probe(t, fields)
	}
	if why == "" {
		p.fields, p.own = fields, nil
	}
	p.why = why
	return p
}

// generatedPackage reports whether pkg is one whose generated decoders the
// table follows.
func generatedPackage(pkg string) bool {
	return strings.HasPrefix(pkg, "k8s.io/api/") || strings.HasPrefix(pkg, "k8s.io/apimachinery/")
}

// ownOf returns the Unmarshal of *t called on the value at a pointer, or
// nil when *t has none.
func ownOf(t reflect.Type) func(unsafe.Pointer, []byte) error {
	if !reflect.PointerTo(t).Implements(reflect.TypeFor[unmarshaler]()) {
		return nil
	}
	t2 := reflect2.Type2(t)
	return func(p unsafe.Pointer, b []byte) error {
		return t2.PackEFace(p).(unmarshaler).Unmarshal(b)
	}
}

// fields builds the table of the struct t, or says why some field cannot
// be mapped (t then decodes with its own Unmarshal).
func (b *builder) fields(t reflect.Type) ([]field, string) {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tagText, tagged := sf.Tag.Lookup("protobuf")
		if !tagged {
			if sf.Anonymous && sf.Type == typeMeta {
				continue // TypeMeta is not part of an object's message
			}
			return nil, "field " + sf.Name + " has no protobuf tag"
		}
		if !sf.IsExported() {
			return nil, "field " + sf.Name + " is not exported"
		}
		num, f, ok := b.field(sf, tagText)
		if !ok {
			return nil, fmt.Sprintf("field %s (%v, %q) is not mapped", sf.Name, sf.Type, tagText)
		}
		if num >= len(out) {
			out = append(out, make([]field, num+1-len(out))...)
		}
		if out[num].kind != kSkip {
			return nil, fmt.Sprintf("two fields are numbered %d", num)
		}
		out[num] = f
	}
	return out, ""
}

// Own lists the types p's type holds, itself included, that decode with
// their own Unmarshal, each with the reason.
func (p *Plan) Own() map[reflect.Type]string {
	out := map[reflect.Type]string{}
	seen := map[*Plan]bool{}
	var walk func(*Plan)
	walk = func(p *Plan) {
		if p == nil || seen[p] {
			return
		}
		seen[p] = true
		if p.own != nil {
			out[p.typ] = p.why
			return
		}
		for i := range p.fields {
			walk(p.fields[i].msg)
		}
	}
	walk(p)
	return out
}

// field maps one struct field with its protobuf tag ("bytes,3,opt,name=x").
func (b *builder) field(sf reflect.StructField, tagText string) (int, field, bool) {
	parts := strings.Split(tagText, ",")
	if len(parts) < 3 {
		return 0, field{}, false
	}
	num, err := strconv.Atoi(parts[1])
	if err != nil || num <= 0 || num > 1<<16 {
		return 0, field{}, false
	}
	// Only the number is read from the tag, and the probe checks it. The
	// wire type follows the Go type, as the generated code does: some
	// tags say bytes of an *int32, opt of a slice or rep of a string.
	f := field{off: sf.Offset, typ: sf.Type, wire: wireVarint, kind: varintKind(sf.Type)}
	if f.kind == kSkip {
		f.wire, f.kind = wireBytes, b.bytesKind(sf, &f)
	}
	if f.kind == kSkip {
		return 0, field{}, false
	}
	return num, f, true
}

// varintKind maps a varint field's Go type; kSkip for none.
func varintKind(t reflect.Type) kind {
	ptr := t.Kind() == reflect.Pointer
	if ptr {
		t = t.Elem()
	}
	var k kind
	switch t.Kind() {
	case reflect.Bool:
		k = kBool
	case reflect.Int32:
		k = kInt32
	case reflect.Int64:
		k = kInt64
	default:
		return kSkip
	}
	if ptr {
		k++ // each pointer kind follows its value kind
	}
	return k
}

// bytesKind maps a length-delimited field's Go type; kSkip for none.
func (b *builder) bytesKind(sf reflect.StructField, f *field) kind {
	t := sf.Type
	if t.Kind() != reflect.Struct && t.Kind() != reflect.Pointer && ownOf(t) != nil {
		f.msg = b.plan(t)
		return kOwn
	}
	switch t.Kind() {
	case reflect.String:
		return kString
	case reflect.Pointer:
		switch t.Elem().Kind() {
		case reflect.String:
			return kStringPtr
		case reflect.Struct:
			f.msg = b.plan(t.Elem())
			return msgKind(f.msg, kMsgPtr)
		}
	case reflect.Struct:
		f.msg = b.plan(t)
		return msgKind(f.msg, kMsg)
	case reflect.Slice:
		return b.sliceKind(t, f)
	case reflect.Map:
		return b.mapKind(sf, f)
	}
	return kSkip
}

func msgKind(p *Plan, k kind) kind {
	if p == nil {
		return kSkip
	}
	return k
}

// sliceKind maps a repeated length-delimited field ([]byte is not one:
// it is mapped nowhere, so its type keeps its own Unmarshal).
func (b *builder) sliceKind(t reflect.Type, f *field) kind {
	e := t.Elem()
	switch e.Kind() {
	case reflect.String:
		return kStringSlice
	case reflect.Struct:
		f.msg, f.size = b.plan(e), e.Size()
		f.slice = reflect2.Type2(t).(*reflect2.UnsafeSliceType)
		return msgKind(f.msg, kMsgSlice)
	case reflect.Pointer:
		if e.Elem().Kind() == reflect.Struct {
			f.msg, f.size = b.plan(e.Elem()), e.Size()
			f.slice = reflect2.Type2(t).(*reflect2.UnsafeSliceType)
			return msgKind(f.msg, kMsgPtrSlice)
		}
	}
	return kSkip
}

// mapKind maps a map field: entries of a string key (field 1) and a string
// or message value (field 2), as gogo-protobuf encodes every map (the
// k8s.io types carry no protobuf_key or protobuf_val tags).
func (b *builder) mapKind(sf reflect.StructField, f *field) kind {
	t := sf.Type
	if t.Key().Kind() != reflect.String {
		return kSkip
	}
	// A map whose key is of a named string type has the layout of one
	// keyed by string (Kubernetes' generated conversions rely on the same):
	// the common ones are filled as such, without reflection.
	switch t.Elem().Kind() {
	case reflect.String:
		if t.Elem() == stringType {
			return kStringMap
		}
		return kMap
	case reflect.Slice:
		if t.Elem() == bytesType {
			return kBytesMap
		}
	case reflect.Struct:
		f.msg = b.plan(t.Elem())
		if t.Elem() == quantityType {
			return msgKind(f.msg, kQuantityMap)
		}
		return msgKind(f.msg, kMap)
	}
	return kSkip
}
