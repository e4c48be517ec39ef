package protodec

import (
	"hash/maphash"
	"reflect"
	"strings"
	"sync/atomic"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Quantities: a pod's resource lists hold a handful of quantities ("100m",
// "128Mi") that every pod of a workload repeats, and the Unmarshal of each
// parses its string again, a tenth of a pod's decode. A quantity's value
// is a function of its string, so the decoder keeps the last quantities it
// parsed in a small direct-mapped table and copies the one whose string
// matches.
//
// Only quantities with no pointer inside are kept (a value too large for
// int64 is held as an *inf.Dec, which a copy would share), so a copy is
// independent of the table's.
const quantitySlots = 1 << 10

type quantityEntry struct {
	s string
	q resource.Quantity
}

var (
	quantitySeed  = maphash.MakeSeed()
	quantityTable [quantitySlots]atomic.Pointer[quantityEntry]
)

// quantityOwn decodes the message b into the Quantity at p exactly as
// Quantity.Unmarshal does: through the table when b is one string field
// (the only form the server writes), by Unmarshal otherwise.
func quantityOwn(p unsafe.Pointer, b []byte) error {
	q := (*resource.Quantity)(p)
	s, ok := onlyString(b)
	if !ok {
		return q.Unmarshal(b)
	}
	slot := &quantityTable[quantitySlot(s)]
	if e := slot.Load(); e != nil && e.s == string(s) {
		*q = e.q
		return nil
	}
	if err := q.Unmarshal(b); err != nil {
		return err
	}
	if !holdsPointer(q) {
		slot.Store(&quantityEntry{s: strings.Clone(string(s)), q: *q})
	}
	return nil
}

// quantitySlot is the table's slot for the string s.
func quantitySlot(s []byte) uint64 { return maphash.Bytes(quantitySeed, s) % quantitySlots }

// onlyString returns the content of b when b is exactly one field 1 of
// wire type bytes.
func onlyString(b []byte) ([]byte, bool) {
	num, wire, next, ok := tag(b, 0)
	if !ok || num != 1 || wire != wireBytes {
		return nil, false
	}
	from, to, ok := span(b, next)
	if !ok || to != len(b) {
		return nil, false
	}
	return b[from:to], true
}

// quantityDec is the index of Quantity's d field (infDecAmount, whose one
// field is the *inf.Dec).
var quantityDec = func() int {
	f, ok := reflect.TypeFor[resource.Quantity]().FieldByName("d")
	if !ok || f.Type.Kind() != reflect.Struct || f.Type.NumField() != 1 || f.Type.Field(0).Type.Kind() != reflect.Pointer {
		return -1
	}
	return f.Index[0]
}()

// holdsPointer reports whether q holds its value as an *inf.Dec (or its
// layout is not the one this file knows, which counts as holding one).
func holdsPointer(q *resource.Quantity) bool {
	if quantityDec < 0 {
		return true
	}
	return !reflect.ValueOf(q).Elem().Field(quantityDec).Field(0).IsNil()
}
