package sim

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
)

// Strategic merge patch, for the built-in kinds (custom resources get 415, as on
// the real server). It is a JSON merge patch except where fieldrules.go gives a
// list a merge key or makes it a set:
//
//   - a keyed list merges item by item on the merge key (containers by name,
//     ports by containerPort, env by name, volumes by name...); an item
//     {"name": "x", "$patch": "delete"} deletes that item, an item
//     {"$patch": "replace"} makes the rest of the patch list replace the list;
//   - a set (finalizers) merges as a union; $deleteFromPrimitiveList/<field>
//     removes values from it;
//   - any other list is replaced;
//   - in a map, "$patch": "replace" replaces the map with the rest of the patch,
//     "$patch": "delete" deletes it, "$retainKeys" drops the keys it does not list
//     (every key of the patch must be listed), "$setElementOrder/<field>" orders
//     a merged list;
//   - merged lists are ordered as the real server orders them: the patch's items
//     in the patch's order, interleaved with the items only the server had at
//     their old positions where both orders allow it.

const (
	directivePatch      = "$patch"
	directiveRetainKeys = "$retainKeys"
	prefixSetOrder      = "$setElementOrder/"
	prefixDeleteFrom    = "$deleteFromPrimitiveList/"
)

// patchError is a patch the server cannot apply; code is the answer's status.
type patchError struct {
	code int
	msg  string
}

func (e *patchError) Error() string { return e.msg }

// errPatchInternal is how the real server answers a strategic patch it cannot
// apply (a missing merge key, an unknown $patch): 500 without a reason.
func errPatchInternal(format string, args ...any) error {
	return &patchError{code: http.StatusInternalServerError, msg: fmt.Sprintf(format, args...)}
}

var errRetainKeys = &patchError{code: http.StatusBadRequest, msg: "invalid patch format of retainKeys"}

// strategicMerge applies a strategic merge patch to orig (modified in place).
func strategicMerge(rules kindRules, orig, patch map[string]any) (map[string]any, error) {
	out, deleted, err := mergeStrategicMap(rules, "", orig, patch)
	if err != nil {
		return nil, err
	}
	if deleted {
		return map[string]any{}, nil
	}
	return out, nil
}

// mergeStrategicMap merges patch into orig at path; deleted reports a
// "$patch": "delete" of the whole map.
func mergeStrategicMap(rules kindRules, path string, orig, patch map[string]any) (map[string]any, bool, error) {
	if orig == nil {
		orig = map[string]any{}
	}
	if p, ok := patch[directivePatch]; ok {
		switch p {
		case "replace":
			return stripStrategic(patch).(map[string]any), false, nil
		case "delete":
			return nil, true, nil
		default:
			return nil, false, errPatchInternal("unknown patch type: %v in map: %v", p, patch)
		}
	}
	if rk, ok := patch[directiveRetainKeys]; ok {
		if err := retainKeys(orig, patch, rk); err != nil {
			return nil, false, err
		}
	}
	orders := map[string][]any{}
	for k, v := range patch {
		switch {
		case strings.HasPrefix(k, prefixDeleteFrom):
			field := strings.TrimPrefix(k, prefixDeleteFrom)
			del, _ := v.([]any)
			if list, ok := orig[field].([]any); ok {
				orig[field] = deleteScalars(list, del)
			}
		case strings.HasPrefix(k, prefixSetOrder):
			order, ok := v.([]any)
			if !ok {
				return nil, false, &patchError{code: http.StatusBadRequest, msg: "invalid type for " + k}
			}
			orders[strings.TrimPrefix(k, prefixSetOrder)] = order
		}
	}
	for k, v := range patch {
		if strings.HasPrefix(k, "$") {
			continue
		}
		if v == nil {
			delete(orig, k)
			continue
		}
		merged, deleted, err := mergeStrategicValue(rules, childPath(path, k), orig[k], v)
		if err != nil {
			return nil, false, err
		}
		if deleted {
			delete(orig, k)
		} else {
			orig[k] = merged
		}
	}
	for field, order := range orders {
		if list, ok := orig[field].([]any); ok {
			orig[field] = reorder(list, order, rules[childPath(path, field)])
		}
	}
	return orig, false, nil
}

func mergeStrategicValue(rules kindRules, path string, orig, patch any) (any, bool, error) {
	switch p := patch.(type) {
	case map[string]any:
		om, _ := orig.(map[string]any)
		if rules[path].shape == shapeAtomic {
			return stripStrategic(p), false, nil
		}
		return mergeStrategicMap(rules, path, om, p)
	case []any:
		ol, _ := orig.([]any)
		out, err := mergeStrategicList(rules, path, ol, p)
		return out, false, err
	}
	return patch, false, nil
}

// retainKeys drops the keys of orig that the $retainKeys list does not name,
// after checking that it names every key the patch sets.
func retainKeys(orig, patch map[string]any, rk any) error {
	list, ok := rk.([]any)
	if !ok {
		return errRetainKeys
	}
	keep := map[string]bool{}
	for _, v := range list {
		if s, ok := v.(string); ok {
			keep[s] = true
		}
	}
	for k, v := range patch {
		if v == nil || strings.HasPrefix(k, "$") {
			continue
		}
		if !keep[k] {
			return errRetainKeys
		}
	}
	for k := range orig {
		if !keep[k] {
			delete(orig, k)
		}
	}
	return nil
}

func mergeStrategicList(rules kindRules, path string, orig, patch []any) ([]any, error) {
	rule := rules[path]
	switch {
	case rule.shape == shapeKeyed && rule.mergeKey != "":
		return mergeKeyedList(rules, path, rule.mergeKey, orig, patch)
	case rule.shape == shapeSet:
		merged := dedupScalars(append(append([]any{}, orig...), patch...))
		return orderMerged(merged, patch, orig, rule), nil
	}
	return stripStrategic(patch).([]any), nil
}

// mergeKeyedList merges patch into orig item by item on key.
func mergeKeyedList(rules kindRules, path, key string, orig, patch []any) ([]any, error) {
	var items []any
	for _, it := range patch {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, errPatchInternal("merging an object in json but data type is not map, instead is: %T", it)
		}
		switch m[directivePatch] {
		case nil:
			items = append(items, m)
		case "replace":
			if len(m) == 1 { // {"$patch": "replace"}: the rest of the list replaces the list
				var rest []any
				for _, other := range patch {
					if om, ok := other.(map[string]any); !ok || om[directivePatch] != "replace" {
						rest = append(rest, other)
					}
				}
				return stripStrategic(rest).([]any), nil
			}
			items = append(items, m)
		case "delete":
			kv, ok := m[key]
			if !ok {
				return nil, errPatchInternal("map: %v does not contain declared merge key: %s", m, key)
			}
			orig = removeKeyed(orig, key, kv)
		default:
			return nil, errPatchInternal("unknown patch type: %v in map: %v", m[directivePatch], m)
		}
	}
	merged := append([]any{}, orig...)
	var patchItems []any
	for _, it := range items {
		m := it.(map[string]any)
		kv, ok := m[key]
		if !ok {
			return nil, errPatchInternal("map: %v does not contain declared merge key: %s", m, key)
		}
		i := indexKeyed(merged, key, kv)
		var base map[string]any
		if i >= 0 {
			base, _ = merged[i].(map[string]any)
		}
		out, deleted, err := mergeStrategicMap(rules, path+"[]", base, m)
		if err != nil {
			return nil, err
		}
		switch {
		case deleted && i >= 0:
			merged = append(merged[:i], merged[i+1:]...)
			continue
		case deleted:
			continue
		case i >= 0:
			merged[i] = out
		default:
			merged = append(merged, out)
		}
		patchItems = append(patchItems, it)
	}
	return orderMerged(merged, patchItems, orig, fieldRule{mergeKey: key}), nil
}

// orderMerged orders a merged list: the items the patch names, in the patch's
// order, merged with the items only the server had, in their old order.
func orderMerged(merged, patch, orig []any, rule fieldRule) []any {
	var fromPatch, serverOnly []any
	for _, it := range merged {
		if indexOf(patch, it, rule.mergeKey) >= 0 {
			fromPatch = append(fromPatch, it)
		} else {
			serverOnly = append(serverOnly, it)
		}
	}
	sortByOrder(fromPatch, patch, rule.mergeKey)
	return interleave(serverOnly, fromPatch, orig, rule.mergeKey)
}

// reorder applies a $setElementOrder list to a merged list.
func reorder(list, order []any, rule fieldRule) []any {
	key := ""
	if rule.shape == shapeKeyed {
		key = rule.mergeKey
	}
	var named, serverOnly []any
	for _, it := range list {
		if indexOf(order, it, key) >= 0 {
			named = append(named, it)
		} else {
			serverOnly = append(serverOnly, it)
		}
	}
	sortByOrder(named, order, key)
	return interleave(serverOnly, named, list, key)
}

// interleave inserts the items of left (in order) into right (in order): a left
// item goes first when both are in serverOrder and it came first there.
func interleave(left, right, serverOrder []any, key string) []any {
	out := make([]any, 0, len(left)+len(right))
	i, j := 0, 0
	for i < len(left) || j < len(right) {
		switch {
		case j >= len(right):
			out = append(out, left[i])
			i++
		case i >= len(left):
			out = append(out, right[j])
			j++
		default:
			li, ri := indexOf(serverOrder, left[i], key), indexOf(serverOrder, right[j], key)
			if li >= 0 && ri >= 0 && li < ri {
				out = append(out, left[i])
				i++
			} else {
				out = append(out, right[j])
				j++
			}
		}
	}
	return out
}

// sortByOrder sorts items (stably) by their position in order.
func sortByOrder(items, order []any, key string) {
	pos := func(it any) int { return indexOf(order, it, key) }
	for a := 1; a < len(items); a++ {
		for b := a; b > 0 && pos(items[b]) < pos(items[b-1]); b-- {
			items[b], items[b-1] = items[b-1], items[b]
		}
	}
}

// indexOf finds it in list: by the merge key's value when key is set, else by value.
func indexOf(list []any, it any, key string) int {
	if key == "" {
		for i, x := range list {
			if reflect.DeepEqual(normalizeJSON(x), normalizeJSON(it)) {
				return i
			}
		}
		return -1
	}
	m, _ := it.(map[string]any)
	kv, ok := m[key]
	if !ok {
		return -1
	}
	return indexKeyed(list, key, kv)
}

func indexKeyed(list []any, key string, kv any) int {
	for i, x := range list {
		if m, ok := x.(map[string]any); ok && sameScalar(m[key], kv) {
			return i
		}
	}
	return -1
}

func removeKeyed(list []any, key string, kv any) []any {
	out := list[:0:0]
	for _, x := range list {
		if m, ok := x.(map[string]any); ok && sameScalar(m[key], kv) {
			continue
		}
		out = append(out, x)
	}
	return out
}

// sameScalar compares decoded scalars, numbers by value however they were decoded.
func sameScalar(a, b any) bool {
	return reflect.DeepEqual(normalizeJSON(a), normalizeJSON(b))
}

func dedupScalars(list []any) []any {
	var out []any
	for _, x := range list {
		if indexOf(out, x, "") < 0 {
			out = append(out, x)
		}
	}
	return out
}

func deleteScalars(list, del []any) []any {
	var out []any
	for _, x := range list {
		if indexOf(del, x, "") < 0 {
			out = append(out, x)
		}
	}
	return out
}

// stripStrategic removes the directives from a value that replaces what was there.
func stripStrategic(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if !strings.HasPrefix(k, "$") {
				out[k] = stripStrategic(e)
			}
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			if m, ok := e.(map[string]any); ok && m[directivePatch] != nil {
				continue
			}
			out = append(out, stripStrategic(e))
		}
		return out
	}
	return v
}

// asPatchError returns the status a strategic patch failure answers.
func asPatchError(err error) *StatusError {
	var pe *patchError
	if errors.As(err, &pe) {
		if pe.code == http.StatusBadRequest {
			return errBadRequest(pe.msg)
		}
		return newStatus(pe.code, "", pe.msg, nil)
	}
	return errBadRequest(err.Error())
}
