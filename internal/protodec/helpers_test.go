package protodec

import (
	"reflect"
	"unsafe"
)

// reflectPtr is the pointer p as Decode takes it.
func reflectPtr(p any) unsafe.Pointer { return reflect.ValueOf(p).UnsafePointer() }

// within reports whether s's bytes lie inside b.
func within(b []byte, s string) bool {
	if len(s) == 0 || len(b) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(&b[0]))
	return p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(b))
}
