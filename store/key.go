package store

import (
	"fmt"
	"reflect"
	"strings"
)

// metaObject is what MetaKey needs of an object.
type metaObject interface {
	GetNamespace() string
	GetName() string
}

// namespaced is what the built-in namespace index needs of an object.
type namespaced interface {
	GetNamespace() string
}

// MetaKey returns "namespace/name", or "name" when the namespace is empty.
// obj must have GetNamespace() and GetName() methods and a non-empty name.
// It returns an error wrapping ErrInvalidObject, never panics, for nil, a nil
// pointer, a type without those methods, an empty name, or a name or
// namespace containing '/' (which would make two objects share a key).
func MetaKey(obj any) (string, error) {
	m, err := asMeta(obj)
	if err != nil {
		return "", err
	}
	ns, name := m.GetNamespace(), m.GetName()
	if name == "" {
		return "", fmt.Errorf("store: %w: %T in namespace %q has an empty name", ErrInvalidObject, obj, ns)
	}
	if strings.IndexByte(name, '/') >= 0 {
		return "", fmt.Errorf("store: %w: name %q contains '/'", ErrInvalidObject, name)
	}
	if ns == "" {
		return name, nil
	}
	if strings.IndexByte(ns, '/') >= 0 {
		return "", fmt.Errorf("store: %w: namespace %q contains '/'", ErrInvalidObject, ns)
	}
	return ns + "/" + name, nil
}

// asMeta returns obj as a metaObject, or an error if calling its methods
// could not work.
func asMeta(obj any) (metaObject, error) {
	if obj == nil {
		return nil, fmt.Errorf("store: %w: nil object", ErrInvalidObject)
	}
	m, ok := obj.(metaObject)
	if !ok {
		return nil, fmt.Errorf("store: %w: type %T has no GetNamespace and GetName methods", ErrInvalidObject, obj)
	}
	if isNil(obj) {
		return nil, fmt.Errorf("store: %w: nil %T", ErrInvalidObject, obj)
	}
	return m, nil
}

// isNil reports whether obj holds a nil pointer (or other nil reference):
// calling a promoted method such as GetName on one would panic.
func isNil(obj any) bool {
	v := reflect.ValueOf(obj)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func,
		reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return v.IsNil()
	}
	return false
}

// objectNamespace returns obj's namespace for the built-in NamespaceIndex.
// Objects with an empty namespace (cluster-scoped ones) are not indexed:
// all of them under "" would cost a set entry each and answer nothing List
// does not. A type without GetNamespace has none, so a store of such a type
// (with its own Key) works; a nil object is an error.
func objectNamespace[T any](obj T) (string, error) {
	o := any(obj)
	if o == nil || isNil(o) {
		return "", fmt.Errorf("store: %w: nil %T", ErrInvalidObject, o)
	}
	n, ok := o.(namespaced)
	if !ok {
		return "", nil
	}
	return n.GetNamespace(), nil
}
