package watch

import (
	"reflect"
	"sync"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Interning after the fact: a generated protobuf Unmarshal allocates every
// string of every object anew, so a cache of protobuf-decoded objects
// would hold the same namespaces, label values, image names and
// managedFields sets a hundred thousand times over. internObject walks a
// decoded object once, along a plan built per type by reflection, and
// replaces each string (and each metav1.FieldsV1) with the intern table's
// shared copy. Only exported fields are walked, so the insides of
// time.Time (its *Location is shared by every time) and of other types
// with hidden state are left alone; map keys and values are left too,
// since a map cannot be changed in place.

// walker interns the strings of the value at p.
type walker func(p unsafe.Pointer)

var plans sync.Map // reflect.Type -> *plan

type plan struct {
	walk walker // nil when the type holds no string to intern
}

// planOf returns the walker of t, building and caching it on first use;
// nil when t holds no string the walk can reach.
func planOf(t reflect.Type) walker {
	if p, ok := plans.Load(t); ok {
		return p.(*plan).walk
	}
	building := map[reflect.Type]*plan{}
	w := buildPlan(t, building)
	for typ, p := range building {
		plans.LoadOrStore(typ, p)
	}
	return w
}

// buildPlan builds t's walker. A type met again while it is being built
// (a recursive type) gets a walker that defers to the finished plan.
func buildPlan(t reflect.Type, building map[reflect.Type]*plan) walker {
	if p, ok := plans.Load(t); ok {
		return p.(*plan).walk
	}
	if p, ok := building[t]; ok {
		return func(ptr unsafe.Pointer) {
			if p.walk != nil {
				p.walk(ptr)
			}
		}
	}
	p := &plan{}
	building[t] = p
	p.walk = newWalker(t, building)
	return p.walk
}

func newWalker(t reflect.Type, building map[reflect.Type]*plan) walker {
	switch {
	case t == fieldsV1Type:
		return internFieldsV1
	case t.Kind() == reflect.String:
		return internStringAt
	case t.Kind() == reflect.Struct:
		return structWalker(t, building)
	case t.Kind() == reflect.Pointer:
		return pointerWalker(t, building)
	case t.Kind() == reflect.Slice:
		return sliceWalker(t, building)
	case t.Kind() == reflect.Array:
		return arrayWalker(t, building)
	}
	return nil // numbers, bools, maps, interfaces, channels, funcs
}

func internStringAt(p unsafe.Pointer) {
	s := (*string)(p)
	if len(*s) > 0 && len(*s) <= maxLong {
		*s = interned.internString(*s)
	}
}

func internFieldsV1(p unsafe.Pointer) {
	f := (*metav1.FieldsV1)(p)
	if len(f.Raw) > 0 && len(f.Raw) <= maxLong {
		s := interned.intern(f.Raw)
		f.Raw = unsafe.Slice(unsafe.StringData(s), len(s))
	}
}

func structWalker(t reflect.Type, building map[reflect.Type]*plan) walker {
	type part struct {
		off  uintptr
		walk walker
	}
	var parts []part
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if w := buildPlan(f.Type, building); w != nil {
			parts = append(parts, part{f.Offset, w})
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return func(p unsafe.Pointer) {
		for _, pt := range parts {
			pt.walk(unsafe.Add(p, pt.off))
		}
	}
}

func pointerWalker(t reflect.Type, building map[reflect.Type]*plan) walker {
	elem := buildPlan(t.Elem(), building)
	if elem == nil {
		return nil
	}
	return func(p unsafe.Pointer) {
		if q := *(*unsafe.Pointer)(p); q != nil {
			elem(q)
		}
	}
}

func sliceWalker(t reflect.Type, building map[reflect.Type]*plan) walker {
	elem := buildPlan(t.Elem(), building)
	if elem == nil {
		return nil
	}
	size := t.Elem().Size()
	return func(p unsafe.Pointer) {
		s := (*[]byte)(p) // only the header's data and length are read
		data := unsafe.Pointer(unsafe.SliceData(*s))
		for i := range len(*s) {
			elem(unsafe.Add(data, uintptr(i)*size))
		}
	}
}

func arrayWalker(t reflect.Type, building map[reflect.Type]*plan) walker {
	elem := buildPlan(t.Elem(), building)
	if elem == nil {
		return nil
	}
	size, n := t.Elem().Size(), t.Len()
	return func(p unsafe.Pointer) {
		for i := range n {
			elem(unsafe.Add(p, uintptr(i)*size))
		}
	}
}
