package pbwire

import "reflect"

// HasOwnMethod reports whether the pointer type t has a method name of its
// own rather than one promoted from a single embedded field. A slim struct
// embedding only metav1.ObjectMeta has ObjectMeta's generated Marshal and
// Unmarshal in its method set; they encode and decode the metadata alone,
// so such a type must not be taken for one with a protobuf encoding of its
// own. A generated k8s.io/api type embeds both TypeMeta and ObjectMeta,
// whose methods collide, so its method set holds only its own.
//
// A type that embeds exactly one field providing the method and also
// declares the method itself is taken for promoted: the rule cannot tell
// them apart, and JSON is the safe answer for it.
func HasOwnMethod(t reflect.Type, name string) bool {
	if _, ok := t.MethodByName(name); !ok {
		return false
	}
	s := t
	if s.Kind() == reflect.Pointer {
		s = s.Elem()
	}
	if s.Kind() != reflect.Struct {
		return true
	}
	providers := 0
	for i := range s.NumField() {
		f := s.Field(i)
		if !f.Anonymous {
			continue
		}
		ft := f.Type
		if _, ok := ft.MethodByName(name); ok {
			providers++
			continue
		}
		if ft.Kind() != reflect.Pointer {
			if _, ok := reflect.PointerTo(ft).MethodByName(name); ok {
				providers++
			}
		}
	}
	return providers != 1
}
