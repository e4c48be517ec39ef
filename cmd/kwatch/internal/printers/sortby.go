package printers

import (
	"fmt"
	"sort"
)

// SortKey is the value an object sorts by under --sort-by: the first
// result of the path, nil when the object has none (it sorts first).
func SortKey(jp *JSONPath, obj any) (any, error) {
	vals, err := jp.Find(obj)
	if err != nil {
		return nil, err
	}
	if len(vals) == 0 {
		return nil, nil
	}
	return vals[0], nil
}

// SortStable sorts items by keys (keys[i] is items[i]'s), keeping the
// order of equal ones: numbers as numbers, strings byte by byte
// ("web-10" before "web-9"), missing keys first, as kubectl's --sort-by.
func SortStable[T any](items []T, keys []any) error {
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	var bad error
	sort.SliceStable(idx, func(a, b int) bool {
		less, err := keyLess(keys[idx[a]], keys[idx[b]])
		if err != nil && bad == nil {
			bad = err
		}
		return less
	})
	if bad != nil {
		return bad
	}
	sorted := make([]T, len(items))
	for i, j := range idx {
		sorted[i] = items[j]
	}
	copy(items, sorted)
	return nil
}

func keyLess(a, b any) (bool, error) {
	switch {
	case a == nil:
		return b != nil, nil
	case b == nil:
		return false, nil
	}
	if x, ok := number(a); ok {
		if y, ok := number(b); ok {
			return x < y, nil
		}
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return x < y, nil
		}
	case bool:
		if y, ok := b.(bool); ok {
			return !x && y, nil
		}
	case map[string]any, []any:
		return FormatValue(a) < FormatValue(b), nil
	}
	return false, fmt.Errorf("--sort-by: cannot compare %s with %s", FormatValue(a), FormatValue(b))
}
