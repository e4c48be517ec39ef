package diff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Op is what happened to a field. The zero value is Changed.
type Op int

const (
	// Changed: the field has another value.
	Changed Op = iota
	// Added: the field is new; Old is unset.
	Added
	// Removed: the field is gone; New is unset.
	Removed
)

// Change is one field that differs between two versions of an object, a
// plain value. Old and New are decoded JSON (see Decode): string,
// json.Number, bool, nil, map[string]any or []any.
type Change struct {
	// Path names the field: map keys joined by dots (a key that is not a
	// plain word in brackets: metadata.labels["app.kubernetes.io/name"]),
	// list elements by their key ([name=web]) or position ([2]).
	Path string
	Op   Op
	Old  any
	New  any
}

// Options tune Compare. The zero value leaves noise out.
type Options struct {
	// Noise keeps the fields every write changes (see Noise).
	Noise bool
}

// Noise reports whether the field at segs (map keys from the object's root;
// list elements as "") is one that changes with every write or follows
// another change, so that showing it says nothing: the resourceVersion,
// the generation (bumped by any spec change, which is shown),
// status.observedGeneration (which follows it) and managedFields (server-side
// apply's bookkeeping, whose times move on every write).
func Noise(segs []string) bool {
	if len(segs) < 2 {
		return false
	}
	switch segs[0] + "." + segs[1] {
	case "metadata.resourceVersion", "metadata.generation", "metadata.managedFields", "status.observedGeneration":
		return true
	}
	return false
}

// errNotObject: a version is valid JSON but not an object.
var errNotObject = errors.New("not a JSON object")

// Decode decodes an object's JSON for Compare and for a JSON patch, numbers kept as
// json.Number so that they compare and print exactly.
func Decode(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decoding the object: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errNotObject
	}
	return m, nil
}

// Compare returns the fields that differ from old to new, in a
// deterministic order (map keys sorted, list elements in new's order, the
// removed ones after them).
func Compare(old, new map[string]any, o Options) []Change {
	w := walker{opts: o}
	w.maps(old, new)
	return w.out
}

// walker collects changes; path and segs are the field being compared.
type walker struct {
	opts Options
	out  []Change
	path []string // printed segments: "spec", ".replicas", "[name=web]"
	segs []string // map keys, "" for list elements, for Noise
}

func (w *walker) push(printed, seg string) {
	w.path, w.segs = append(w.path, printed), append(w.segs, seg)
}

func (w *walker) pop() { w.path, w.segs = w.path[:len(w.path)-1], w.segs[:len(w.segs)-1] }

func (w *walker) emit(op Op, old, new any) {
	if !w.opts.Noise && Noise(w.segs) {
		return
	}
	w.out = append(w.out, Change{Path: strings.Join(w.path, ""), Op: op, Old: old, New: new})
}

// value compares two values at the current path.
func (w *walker) value(old, new any) {
	switch o := old.(type) {
	case map[string]any:
		if n, ok := new.(map[string]any); ok {
			w.maps(o, n)
			return
		}
	case []any:
		if n, ok := new.([]any); ok {
			w.lists(o, n)
			return
		}
	}
	if !reflect.DeepEqual(old, new) {
		w.emit(Changed, old, new)
	}
}

func (w *walker) maps(old, new map[string]any) {
	keys := make([]string, 0, len(old)+len(new))
	for k := range old {
		keys = append(keys, k)
	}
	for k := range new {
		if _, ok := old[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		ov, inOld := old[k]
		nv, inNew := new[k]
		w.push(keySegment(k, len(w.path) == 0), k)
		switch {
		case !inOld:
			w.emit(Added, nil, nv)
		case !inNew:
			w.emit(Removed, ov, nil)
		default:
			w.value(ov, nv)
		}
		w.pop()
	}
}

// lists compares two lists by key when both have one, else by position.
func (w *walker) lists(old, new []any) {
	if key := listKey(old, new); key != "" {
		w.keyedLists(key, old, new)
		return
	}
	for i := range max(len(old), len(new)) {
		w.push(fmt.Sprintf("[%d]", i), "")
		switch {
		case i >= len(old):
			w.emit(Added, nil, new[i])
		case i >= len(new):
			w.emit(Removed, old[i], nil)
		default:
			w.value(old[i], new[i])
		}
		w.pop()
	}
}

func (w *walker) keyedLists(key string, old, new []any) {
	byKey := make(map[string]any, len(old))
	for _, e := range old {
		byKey[keyValue(e, key)] = e
	}
	seen := make(map[string]bool, len(new))
	for _, e := range new {
		kv := keyValue(e, key)
		seen[kv] = true
		w.push("["+key+"="+kv+"]", "")
		if oe, ok := byKey[kv]; ok {
			w.value(oe, e)
		} else {
			w.emit(Added, nil, e)
		}
		w.pop()
	}
	for _, e := range old {
		if kv := keyValue(e, key); !seen[kv] {
			w.push("["+key+"="+kv+"]", "")
			w.emit(Removed, e, nil)
			w.pop()
		}
	}
}

// listKeys are the fields a list of objects may be matched by, in the
// order tried: what Kubernetes' own lists merge on (containers, env,
// volumes and ports by name, conditions by type, volume mounts by path).
var listKeys = []string{"name", "type", "mountPath", "containerPort", "port"}

// listKey returns the first of listKeys that every element of both lists
// has, as a string or number, unique within each list; "" if none does.
func listKey(old, new []any) string {
	if len(old) == 0 && len(new) == 0 {
		return ""
	}
	for _, k := range listKeys {
		if uniqueKey(old, k) && uniqueKey(new, k) {
			return k
		}
	}
	return ""
}

func uniqueKey(list []any, key string) bool {
	seen := make(map[string]bool, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		var kv string
		switch v := m[key].(type) {
		case string:
			kv = v
		case json.Number:
			kv = v.String()
		default:
			return false
		}
		if seen[kv] {
			return false
		}
		seen[kv] = true
	}
	return true
}

// keyValue is an element's key as printed in its path: the value itself
// when it is a plain word, else quoted.
func keyValue(e any, key string) string {
	var s string
	switch v := e.(map[string]any)[key].(type) {
	case string:
		s = v
	case json.Number:
		return v.String()
	}
	if plainWord(s) {
		return s
	}
	return quote(s)
}

// keySegment is a map key in a path: ".key" (or "key" first), or
// ["key"] when it is not a plain word.
func keySegment(k string, first bool) string {
	switch {
	case !plainWord(k):
		return "[" + quote(k) + "]"
	case first:
		return k
	}
	return "." + k
}

// plainWord: s is letters, digits, '_' and '-' only, and not empty.
func plainWord(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// quote is s as a JSON string: control characters escaped, so a key or
// value from the server cannot drive the terminal.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return escapeControls(strings.TrimSuffix(b.String(), "\n"))
}
