package controller

import "strings"

// Key names the object a reconcile is about: namespace and name (an empty
// namespace for a cluster-scoped object).
type Key struct {
	Namespace, Name string
}

// String is "namespace/name", or the name alone for a cluster-scoped
// object: the informer's store key.
func (k Key) String() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// ParseKey reads a store key ("ns/name" or "name").
func ParseKey(s string) Key {
	if ns, name, ok := strings.Cut(s, "/"); ok {
		return Key{Namespace: ns, Name: name}
	}
	return Key{Name: s}
}

// KeyOf is the key of an object.
func KeyOf[T interface {
	GetNamespace() string
	GetName() string
}](obj T) Key {
	return Key{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}
