package watch

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/kwatch/kwatch/internal/pbwire"
)

// Nesting depth on every decoding path. A decoder recurses once per level
// of nesting, and a goroutine that runs out of stack is killed with the
// whole process (recover cannot catch it), so no path may let the input
// choose the depth:
//
//   - JSON watch streams and lists: the framer counts brackets
//     (MaxNestingDepth) before anything is decoded.
//   - JSON Raw (compact store, snapshots): its scanner counts them too.
//   - JSON objects decoded alone (DecodeObject) and protobuf objects of a
//     recursive type (a CRD's JSONSchemaProps): checkNesting below, before
//     the type's decoder runs. json-iterator's own limit (10000) does not
//     cover maps, slices, or a custom UnmarshalJSON, which starts counting
//     again from zero.
//   - Protobuf objects of any other type: the generated decoder recurses
//     only along the type's own fields, so the type bounds the depth, and
//     it skips unknown fields without recursing.

// recursiveTypes caches nestsWithoutBound per type.
var recursiveTypes sync.Map // reflect.Type -> bool

// nestsWithoutBound reports whether a value of t can nest to any depth: t
// reaches itself through struct fields, pointers, slices, arrays or maps,
// or holds an interface, whose dynamic type could.
func nestsWithoutBound(t reflect.Type) bool {
	if v, ok := recursiveTypes.Load(t); ok {
		return v.(bool)
	}
	r := reachesItself(t, map[reflect.Type]bool{})
	recursiveTypes.Store(t, r)
	return r
}

// reachesItself walks the types t holds; onPath maps the types being
// walked to true and the types done to false.
func reachesItself(t reflect.Type, onPath map[reflect.Type]bool) bool {
	if walking, seen := onPath[t]; seen {
		return walking
	}
	onPath[t] = true
	found := false
	switch t.Kind() {
	case reflect.Interface:
		found = true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		found = reachesItself(t.Elem(), onPath)
	case reflect.Map:
		found = reachesItself(t.Key(), onPath) || reachesItself(t.Elem(), onPath)
	case reflect.Struct:
		for i := 0; i < t.NumField() && !found; i++ {
			found = reachesItself(t.Field(i).Type, onPath)
		}
	}
	onPath[t] = false
	return found
}

// checkProtoNesting refuses an object message nested deeper than
// MaxNestingDepth.
func checkProtoNesting(msg []byte) error {
	if err := pbwire.CheckDepth(msg, MaxNestingDepth); err != nil {
		return fmt.Errorf("%w: %w", ErrNestingTooDeep, err)
	}
	return nil
}

// checkJSONNesting refuses a JSON value whose arrays and objects nest
// deeper than MaxNestingDepth. It counts brackets outside strings and
// nothing else: the decoder reports any other fault.
func checkJSONNesting(b []byte) error {
	depth, inStr := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr && c == '\\':
			i++
		case inStr:
			inStr = c != '"'
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			if depth++; depth > MaxNestingDepth {
				return fmt.Errorf("%w: more than %d levels (at byte %d)", ErrNestingTooDeep, MaxNestingDepth, i)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}
