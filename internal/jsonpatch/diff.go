package jsonpatch

import (
	"reflect"
	"slices"
	"strconv"
)

// Diff returns the patch that turns before into after (decoded JSON).
// Scalars compare by value, so numbers decoded as json.Number compare by
// their text and a number nobody touched yields no operation.
func Diff(before, after any) []Op {
	var ops []Op
	diffValue(&ops, "", before, after)
	return ops
}

func diffValue(ops *[]Op, path string, b, a any) {
	if bm, ok := b.(map[string]any); ok {
		if am, ok := a.(map[string]any); ok {
			diffObject(ops, path, bm, am)
			return
		}
	}
	if bs, ok := b.([]any); ok {
		if as, ok := a.([]any); ok && len(as) == len(bs) {
			for i := range bs {
				diffValue(ops, path+"/"+strconv.Itoa(i), bs[i], as[i])
			}
			return
		}
	}
	if !Equal(b, a) {
		*ops = append(*ops, Op{Op: "replace", Path: path, Value: a})
	}
}

func diffObject(ops *[]Op, path string, b, a map[string]any) {
	keys := make([]string, 0, len(b)+len(a))
	for k := range b {
		keys = append(keys, k)
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := path + "/" + EscapeToken(k)
		bv, inB := b[k]
		av, inA := a[k]
		switch {
		case !inA:
			*ops = append(*ops, Op{Op: "remove", Path: p})
		case !inB:
			*ops = append(*ops, Op{Op: "add", Path: p, Value: av})
		default:
			diffValue(ops, p, bv, av)
		}
	}
}

// Equal reports whether two decoded JSON values are equal: objects member
// by member, arrays element by element, scalars by value.
func Equal(b, a any) bool {
	switch bv := b.(type) {
	case map[string]any:
		av, ok := a.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range bv {
			y, ok := av[k]
			if !ok || !Equal(x, y) {
				return false
			}
		}
		return true
	case []any:
		av, ok := a.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range bv {
			if !Equal(bv[i], av[i]) {
				return false
			}
		}
		return true
	}
	switch a.(type) {
	case map[string]any, []any:
		return false
	}
	return reflect.DeepEqual(b, a) // json.Number, string, float64, bool, nil
}
