package printers

import (
	"fmt"
	"slices"
)

// eval applies a path to the current values.
func (ev *evaluator) eval(path []step, cur []any) ([]any, error) {
	vals := cur
	for i := 0; i < len(path); i++ {
		st := path[i]
		if st.kind == stepRecursive {
			vals = descendants(vals)
			if i+1 == len(path) {
				continue
			}
			i++
			next, err := ev.apply(path[i], vals, true)
			if err != nil {
				return nil, err
			}
			vals = next
			continue
		}
		next, err := ev.apply(st, vals, ev.allowMissing)
		if err != nil {
			return nil, err
		}
		vals = next
	}
	return vals, nil
}

// apply applies one step to each value.
func (ev *evaluator) apply(st step, vals []any, allowMissing bool) ([]any, error) {
	var out []any
	for _, v := range vals {
		switch st.kind {
		case stepRoot:
			out = append(out, ev.root)
		case stepCurrent:
			out = append(out, v)
		case stepField:
			m, ok := v.(map[string]any)
			if ok {
				if x, found := m[st.name]; found {
					out = append(out, x)
					continue
				}
			}
			if v != nil && !allowMissing {
				return nil, fmt.Errorf("%s is not found", st.name)
			}
		case stepPath:
			sub := []any{v}
			for _, name := range st.path {
				next, err := ev.apply(step{kind: stepField, name: name}, sub, allowMissing)
				if err != nil {
					return nil, err
				}
				sub = next
			}
			out = append(out, sub...)
		case stepKeys:
			m, _ := v.(map[string]any)
			for _, k := range st.keys {
				x, found := m[k]
				if !found && !allowMissing {
					return nil, fmt.Errorf("%s is not found", k)
				}
				if found {
					out = append(out, x)
				}
			}
		case stepWildcard:
			out = append(out, children(v)...)
		case stepIndex:
			list, ok := v.([]any)
			if !ok {
				if v != nil && !allowMissing {
					return nil, fmt.Errorf("%s is not an array", FormatValue(v))
				}
				continue
			}
			for _, n := range st.indexes {
				if n < 0 {
					n += len(list)
				}
				if n < 0 || n >= len(list) {
					if !allowMissing {
						return nil, fmt.Errorf("array index out of bounds: index %d, length %d", n, len(list))
					}
					continue
				}
				out = append(out, list[n])
			}
		case stepSlice:
			list, ok := v.([]any)
			if !ok {
				continue
			}
			out = append(out, sliceOf(list, st.slice)...)
		case stepFilter:
			list, ok := v.([]any)
			if !ok {
				if v == nil {
					continue
				}
				return nil, fmt.Errorf("%s is not an array and cannot be filtered", FormatValue(v))
			}
			for _, e := range list {
				keep, err := ev.test(st.filter, e)
				if err != nil {
					return nil, err
				}
				if keep {
					out = append(out, e)
				}
			}
		}
	}
	return out, nil
}

// children are a map's values (by key order) or a list's elements.
func children(v any) []any {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = t[k]
		}
		return out
	case []any:
		return t
	}
	return nil
}

// descendants are each value and everything below it, depth first.
func descendants(vals []any) []any {
	var out []any
	var walk func(v any)
	walk = func(v any) {
		out = append(out, v)
		for _, c := range children(v) {
			walk(c)
		}
	}
	for _, v := range vals {
		walk(v)
	}
	return out
}

// sliceOf is list[start:end:step] with Python's rules for negatives and
// bounds; a negative step walks backwards.
func sliceOf(list []any, s [3]*int) []any {
	n := len(list)
	stepN := 1
	if s[2] != nil && *s[2] != 0 {
		stepN = *s[2]
	}
	clamp := func(p *int, def int) int {
		if p == nil {
			return def
		}
		x := *p
		if x < 0 {
			x += n
		}
		return max(min(x, n), -1)
	}
	var out []any
	if stepN > 0 {
		start, end := max(clamp(s[0], 0), 0), clamp(s[1], n)
		for i := start; i < end; i += stepN {
			out = append(out, list[i])
		}
		return out
	}
	start, end := min(clamp(s[0], n-1), n-1), clamp(s[1], -1)
	for i := start; i > end && i >= 0; i += stepN {
		out = append(out, list[i])
	}
	return out
}

// test evaluates a filter for one element.
func (ev *evaluator) test(f *filter, e any) (bool, error) {
	inner := &evaluator{root: ev.root, allowMissing: true}
	left, err := inner.eval(f.left, []any{e})
	if err != nil || len(left) == 0 {
		return false, err
	}
	if f.op == "" {
		return true, nil
	}
	right := f.lit
	if f.rightPath {
		vals, err := inner.eval(f.right, []any{e})
		if err != nil || len(vals) == 0 {
			return false, err
		}
		right = vals[0]
	}
	return compare(left[0], f.op, right)
}

// compare applies op to two values of one kind; numbers compare as
// numbers whether whole or not.
func compare(a any, op string, b any) (bool, error) {
	if x, ok := number(a); ok {
		if y, ok := number(b); ok {
			return ordered(cmpFloat(x, y), op), nil
		}
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			c := 0
			if x < y {
				c = -1
			} else if x > y {
				c = 1
			}
			return ordered(c, op), nil
		}
	case bool:
		if y, ok := b.(bool); ok && (op == "==" || op == "!=") {
			return (x == y) == (op == "=="), nil
		}
	}
	if op == "==" || op == "!=" {
		return op == "!=", nil // different kinds are never equal
	}
	return false, fmt.Errorf("cannot compare %s %s %s", FormatValue(a), op, FormatValue(b))
}

func number(v any) (float64, bool) {
	switch t := v.(type) {
	case int64:
		return float64(t), true
	case float64:
		return t, true
	case int:
		return float64(t), true
	}
	return 0, false
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func ordered(c int, op string) bool {
	switch op {
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	}
	return false
}
