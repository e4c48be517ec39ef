package watch

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/modern-go/reflect2"
)

// exactSliceDecoder decodes a JSON array into a slice of exactly its
// length. json-iterator's own slice decoder grows the slice by doubling as
// elements arrive, which allocates and copies log2(n)+1 times and leaves up
// to half the capacity unused in every cached object (a pod's conditions,
// env, volume mounts, ...). This one decodes the elements into a pooled
// scratch slice of the same type, then makes one slice of the final length
// and copies them over.
type exactSliceDecoder struct {
	typ   reflect.Type // the slice type
	size  uintptr      // of one element
	st    *reflect2.UnsafeSliceType
	elemT reflect2.Type
	elem  atomic.Pointer[jsoniter.ValDecoder] // resolved on first use: the config is complete by then
	pool  sync.Pool                           // *scratchSlice
}

// scratchSlice is a reusable slice the elements are decoded into; its
// length is its room.
type scratchSlice struct{ v reflect.Value }

// maxPooledScratch bounds the scratch slices kept for reuse, in elements.
const maxPooledScratch = 256

func newExactSliceDecoder(t reflect2.Type) *exactSliceDecoder {
	st := t.(*reflect2.UnsafeSliceType)
	return &exactSliceDecoder{typ: t.Type1(), size: t.Type1().Elem().Size(), st: st, elemT: st.Elem()}
}

func (d *exactSliceDecoder) elemDecoder() jsoniter.ValDecoder {
	if p := d.elem.Load(); p != nil {
		return *p
	}
	dec := json.DecoderOf(reflect2.PtrTo(d.elemT))
	d.elem.Store(&dec)
	return dec
}

func (d *exactSliceDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	switch iter.WhatIsNext() {
	case jsoniter.NilValue:
		iter.Skip()
		d.st.UnsafeSetNil(ptr)
		return
	case jsoniter.ArrayValue:
	default:
		iter.ReportError("decode slice", "expects an array or null")
		iter.Skip()
		return
	}
	elem := d.elemDecoder()
	sc := d.scratch()
	base, room, n := sc.v.UnsafePointer(), sc.v.Len(), 0
	for iter.ReadArray() {
		if n == room {
			d.grow(sc)
			base, room = sc.v.UnsafePointer(), sc.v.Len()
		}
		elem.Decode(unsafe.Add(base, uintptr(n)*d.size), iter)
		n++
		if iter.Error != nil {
			break
		}
	}
	if n == 0 {
		d.st.UnsafeSet(ptr, d.st.UnsafeMakeSlice(0, 0)) // [] is an empty slice, not nil
		d.release(sc)
		return
	}
	out := reflect.NewAt(d.typ, ptr).Elem()
	out.SetZero()
	out.Grow(n) // one allocation of about n elements (rounded to the allocator's size class)
	out.SetLen(n)
	used := sc.v.Slice(0, n)
	reflect.Copy(out, used)
	used.Clear() // drop the references before reuse
	d.release(sc)
}

func (d *exactSliceDecoder) scratch() *scratchSlice {
	if sc, ok := d.pool.Get().(*scratchSlice); ok {
		return sc
	}
	return &scratchSlice{v: reflect.MakeSlice(d.typ, 8, 8)}
}

// grow doubles the scratch slice, keeping its elements; the old one is
// cleared so that the garbage it becomes holds no references.
func (d *exactSliceDecoder) grow(sc *scratchSlice) {
	g := reflect.MakeSlice(d.typ, 2*sc.v.Len(), 2*sc.v.Len())
	reflect.Copy(g, sc.v)
	sc.v.Clear()
	sc.v = g
}

func (d *exactSliceDecoder) release(sc *scratchSlice) {
	if sc.v.Len() <= maxPooledScratch {
		d.pool.Put(sc)
	}
}
