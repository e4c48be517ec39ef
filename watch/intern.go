package watch

import (
	"hash/maphash"
	"reflect"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/modern-go/reflect2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Interning: a cache of 100,000 pods holds the same few thousand strings
// a hundred thousand times over: namespaces, label keys and values, image
// names, container and env names, condition types, node names, and the
// managedFields sets that every pod of a ReplicaSet shares. The decoder
// returns one shared copy of each string it has seen recently instead of
// a fresh allocation per object, which cuts a cached pod's live heap by
// about a third and its decoding allocations by a fifth.
//
// The tables are direct-mapped and fixed in size, so what they pin is
// bounded (shortSlots*maxShort + longSlots*maxLong bytes at worst): a
// string that is not seen again is simply evicted by the next one that
// hashes to its slot. Strings are immutable, so sharing them is safe;
// shared managedFields bytes are why decoded objects must be read-only.
const (
	maxShort   = 128
	shortSlots = 1 << 14
	maxLong    = 4096
	longSlots  = 1 << 10
)

type internTable struct {
	seed  maphash.Seed
	short [shortSlots]internSlot
	long  [longSlots]internSlot
}

// internSlot holds one interned string: its data pointer and length side
// by side, so that a lookup reads the slot and the bytes and nothing in
// between. seq is a sequence lock: odd while a writer fills the slot, and
// bumped by every write, so a reader that sees the same even seq before
// and after reading data and n has read one consistent string. Every field
// is atomic, so readers never race with writers.
type internSlot struct {
	seq  atomic.Uint32
	n    atomic.Uint32
	data atomic.Pointer[byte]
}

var interned = &internTable{seed: maphash.MakeSeed()}

// intern returns a string equal to b, shared with earlier calls when the
// table still holds one.
func (t *internTable) intern(b []byte) string { return t.lookup(b, "", false) }

// internString is intern for a string that is already a string of its
// own: on a miss the table keeps s itself rather than a copy.
func (t *internTable) internString(s string) string {
	return t.lookup(unsafe.Slice(unsafe.StringData(s), len(s)), s, false)
}

// internJSON is intern for the body of a JSON string without escapes: its
// invalid UTF-8 is replaced as Kubernetes' JSON decoder replaces it (see
// jsonstring.go), so the result may differ from b.
func (t *internTable) internJSON(b []byte) string { return t.lookup(b, "", true) }

// lookup returns the table's string equal to b, or on a miss stores and
// returns own (when not empty, a string equal to b) or a copy of b.
//
// The table holds valid UTF-8 only: a miss on invalid bytes stores
// nothing and returns them as they are, or, with replace, with each
// invalid byte replaced by U+FFFD. A hit therefore proves b valid, and
// only misses pay for the check.
func (t *internTable) lookup(b []byte, own string, replace bool) string {
	var slot *internSlot
	switch {
	case len(b) == 0:
		return ""
	case len(b) <= maxShort:
		slot = &t.short[maphash.Bytes(t.seed, b)&(shortSlots-1)]
	case len(b) <= maxLong:
		slot = &t.long[maphash.Bytes(t.seed, b)&(longSlots-1)]
	default:
		return ownOrCopy(b, own, replace)
	}
	seq := slot.seq.Load()
	if seq&1 == 0 {
		n, data := slot.n.Load(), slot.data.Load()
		if slot.seq.Load() == seq && int(n) == len(b) && data != nil {
			if s := unsafe.String(data, n); s == string(b) {
				return s
			}
		}
	}
	if !utf8.Valid(b) {
		return ownOrCopy(b, own, replace)
	}
	s := own
	if s == "" {
		s = string(b)
	}
	if seq&1 == 0 && slot.seq.CompareAndSwap(seq, seq+1) {
		slot.data.Store(unsafe.StringData(s))
		slot.n.Store(uint32(len(s)))
		slot.seq.Store(seq + 2)
	}
	return s
}

// ownOrCopy is lookup's answer for a string the table does not keep.
func ownOrCopy(b []byte, own string, replace bool) string {
	switch {
	case replace && !utf8.Valid(b):
		return replaceInvalidUTF8(b)
	case own != "":
		return own
	}
	return string(b)
}

// iterLayout locates jsoniter.Iterator's unexported buffer and read
// position, so that a string can be interned straight from the input
// without first being copied into a new string. json-iterator has not
// changed this layout in years; if it ever does, the check in init turns
// the fast path off and strings are read the ordinary way, then interned.
var iterLayout struct {
	ok              bool
	buf, head, tail uintptr
}

func init() {
	t := reflect.TypeFor[jsoniter.Iterator]()
	field := func(name string, want reflect.Type) (uintptr, bool) {
		f, ok := t.FieldByName(name)
		return f.Offset, ok && f.Type == want
	}
	var ok1, ok2, ok3 bool
	iterLayout.buf, ok1 = field("buf", reflect.TypeFor[[]byte]())
	iterLayout.head, ok2 = field("head", reflect.TypeFor[int]())
	iterLayout.tail, ok3 = field("tail", reflect.TypeFor[int]())
	iterLayout.ok = ok1 && ok2 && ok3
}

// stringDecoder decodes a JSON string into any type of kind string (string,
// corev1.PodPhase, ...) through the intern table.
type stringDecoder struct{}

func (stringDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	switch iter.WhatIsNext() {
	case jsoniter.NilValue:
		iter.Skip() // null leaves the field as it was, as encoding/json does
		return
	case jsoniter.StringValue:
	default:
		*(*string)(ptr) = iter.ReadString() // reports the type error
		return
	}
	if b, ok := plainStringBytes(iter); ok {
		*(*string)(ptr) = interned.internJSON(b)
		return
	}
	s := readEscapedString(iter)
	if iter.Error == nil {
		*(*string)(ptr) = interned.internString(s)
	}
}

// plainStringBytes consumes a string that has no escapes and lies whole in
// the iterator's buffer, and returns its bytes, which stay valid only until
// the iterator reads on. It consumes nothing and returns false for any
// other string.
func plainStringBytes(iter *jsoniter.Iterator) ([]byte, bool) {
	if !iterLayout.ok {
		return nil, false
	}
	base := unsafe.Pointer(iter)
	buf := *(*[]byte)(unsafe.Add(base, iterLayout.buf))
	head := (*int)(unsafe.Add(base, iterLayout.head))
	tail := *(*int)(unsafe.Add(base, iterLayout.tail))
	if *head >= tail || buf[*head] != '"' {
		return nil, false
	}
	for i := *head + 1; i < tail; i++ {
		switch c := buf[i]; {
		case c == '"':
			b := buf[*head+1 : i]
			*head = i + 1
			return b, true
		case c == '\\' || c < 0x20:
			return nil, false // escapes and control bytes take the ordinary path
		}
	}
	return nil, false
}

// fieldsV1Decoder keeps managedFields' raw field sets, identical across
// the pods of one workload, in the intern table too.
type fieldsV1Decoder struct{}

func (fieldsV1Decoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	f := (*metav1.FieldsV1)(ptr)
	if iter.WhatIsNext() == jsoniter.NilValue {
		iter.Skip()
		f.Raw = nil
		return
	}
	raw := iter.SkipAndReturnBytes()
	if iter.Error != nil {
		return
	}
	s := interned.intern(raw)
	f.Raw = unsafe.Slice(unsafe.StringData(s), len(s))
}

// timeDecoder parses metav1.Time (RFC 3339) straight from the input.
// Without it jsoniter copies the raw value and hands it to the type's
// UnmarshalJSON, which decodes it again with encoding/json: about a tenth
// of the CPU of decoding a pod.
type timeDecoder struct{}

func (timeDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	t := (*metav1.Time)(ptr)
	switch iter.WhatIsNext() {
	case jsoniter.NilValue:
		iter.Skip()
		*t = metav1.Time{}
		return
	case jsoniter.StringValue:
	default:
		iter.ReportError("decode metav1.Time", "expects a string or null")
		iter.Skip()
		return
	}
	var s string
	if b, ok := plainStringBytes(iter); ok {
		s = unsafe.String(unsafe.SliceData(b), len(b)) // only for the parse; not kept
	} else {
		s = iter.ReadString()
	}
	if iter.Error != nil {
		return
	}
	if s == "" {
		*t = metav1.Time{}
		return
	}
	pt, err := time.Parse(time.RFC3339, s)
	if err != nil {
		iter.ReportError("decode metav1.Time", "not an RFC 3339 time")
		return
	}
	t.Time = pt.Local()
}

// quantityDecoder parses resource.Quantity ("250m", "1Gi") from the input,
// through the intern table: requests and limits repeat across pods, and
// the default path copied each value and converted it to a string first.
// Anything but a plain string (a number, an escaped string) takes the
// type's own UnmarshalJSON, so the results are the same.
type quantityDecoder struct{}

func (quantityDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	q := (*resource.Quantity)(ptr)
	if iter.WhatIsNext() == jsoniter.StringValue {
		if b, ok := plainStringBytes(iter); ok {
			parsed, err := resource.ParseQuantity(strings.TrimSpace(interned.intern(b)))
			if err != nil {
				iter.ReportError("decode resource.Quantity", err.Error())
				return
			}
			*q = parsed
			return
		}
	}
	raw := iter.SkipAndReturnBytes()
	if iter.Error != nil {
		return
	}
	if err := q.UnmarshalJSON(raw); err != nil {
		iter.ReportError("decode resource.Quantity", err.Error())
	}
}

// internExtension plugs the decoders above into a jsoniter configuration.
type internExtension struct{ jsoniter.DummyExtension }

var (
	fieldsV1Type = reflect.TypeFor[metav1.FieldsV1]()
	timeType     = reflect.TypeFor[metav1.Time]()
	quantityType = reflect.TypeFor[resource.Quantity]()
)

func (*internExtension) CreateDecoder(t reflect2.Type) jsoniter.ValDecoder {
	switch {
	case t.Type1() == fieldsV1Type:
		return fieldsV1Decoder{}
	case t.Type1() == timeType:
		return timeDecoder{}
	case t.Type1() == quantityType:
		return quantityDecoder{}
	case t.Kind() == reflect.String:
		return stringDecoder{}
	case t.Kind() == reflect.Interface && t.Type1().NumMethod() == 0:
		return anyDecoder{}
	case t.Kind() == reflect.Slice && t.Type1().Elem().Kind() != reflect.Uint8:
		return newExactSliceDecoder(t) // []byte stays base64, as encoding/json has it
	}
	return nil
}

func (*internExtension) CreateMapKeyDecoder(t reflect2.Type) jsoniter.ValDecoder {
	if t.Kind() == reflect.String {
		return stringDecoder{}
	}
	return nil
}
