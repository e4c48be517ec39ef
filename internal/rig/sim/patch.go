package sim

import (
	stdjson "encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// Patch media types the server accepts.
const (
	mediaMergePatch     = "application/merge-patch+json"
	mediaStrategicPatch = "application/strategic-merge-patch+json"
	mediaJSONPatch      = "application/json-patch+json"
	mediaApplyPatch     = "application/apply-patch+yaml"
)

// errUnsupportedPatch is the 415 of a patch type the resource does not take: the
// real server words it one way for built-in kinds and another for custom
// resources (which take no strategic merge patch).
func errUnsupportedPatch(builtin bool) *StatusError {
	if builtin {
		return newStatus(http.StatusUnsupportedMediaType, "UnsupportedMediaType", "415: Unsupported Media Type", &StatusDetails{})
	}
	return newStatus(http.StatusUnsupportedMediaType, "UnsupportedMediaType",
		"the body of the request was in an unknown format - accepted media types include: "+
			mediaJSONPatch+", "+mediaMergePatch+", "+mediaApplyPatch, nil)
}

// applyPatch applies a patch document of the given media type to a decoded object
// of a kind with the given rules (strategic.go; nil for a custom resource, which
// has no strategic merge patch). Failures are worded as the real server words them.
func applyPatch(target map[string]any, patch []byte, mediaType string, rules kindRules) (map[string]any, *StatusError) {
	if !stdjson.Valid(patch) {
		return nil, errBadRequest("invalid JSON patch")
	}
	switch mediaType {
	case mediaMergePatch, mediaStrategicPatch:
		var pm map[string]any
		if err := stdjson.Unmarshal(patch, &pm); err != nil {
			msg := err.Error()
			if mediaType == mediaMergePatch {
				msg = "error decoding patch: " + msg
			}
			return nil, errBadRequest(msg)
		}
		if err := json.Unmarshal(patch, &pm); err != nil { // again, keeping numbers as written
			return nil, errBadRequest(err.Error())
		}
		if mediaType == mediaMergePatch {
			out, _ := mergePatch(target, pm).(map[string]any)
			return out, nil
		}
		if rules == nil {
			return nil, errUnsupportedPatch(false)
		}
		out, err := strategicMerge(rules, target, pm)
		if err != nil {
			return nil, asPatchError(err)
		}
		return out, nil
	case mediaJSONPatch:
		var ops []jsonPatchOp
		if err := stdjson.Unmarshal(patch, &ops); err != nil {
			return nil, errBadRequest("error decoding patch: " + strings.ReplaceAll(err.Error(), "sim.jsonPatchOp", "handlers.jsonPatchOp"))
		}
		if err := json.Unmarshal(patch, &ops); err != nil {
			return nil, errBadRequest(err.Error())
		}
		var doc any = target
		for _, op := range ops {
			var err error
			if doc, err = op.apply(doc); err != nil {
				return nil, errJSONPatch()
			}
		}
		out, ok := doc.(map[string]any)
		if !ok {
			return nil, errJSONPatch()
		}
		return out, nil
	}
	return nil, errUnsupportedPatch(rules != nil)
}

// errJSONPatch is the real server's answer to a JSON patch that does not apply
// (a failed test, a missing path): 422 without the reason.
func errJSONPatch() *StatusError {
	return newStatus(http.StatusUnprocessableEntity, "Invalid", "the server rejected our request due to an error in our request",
		&StatusDetails{})
}

// mergePatch implements RFC 7386: null deletes, objects merge, anything else replaces.
func mergePatch(target, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	tm, ok := target.(map[string]any)
	if !ok {
		tm = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(tm, k)
		} else {
			tm[k] = mergePatch(tm[k], v)
		}
	}
	return tm
}

// jsonPatchOp is one RFC 6902 operation (add, remove, replace, test, move, copy).
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

func (op jsonPatchOp) apply(doc any) (any, error) {
	switch op.Op {
	case "move", "copy":
		from, err := pointerParts(op.From)
		if err != nil {
			return nil, err
		}
		v, err := walkPointer(doc, from)
		if err != nil {
			return nil, err
		}
		if op.Op == "move" {
			if doc, err = (jsonPatchOp{Op: "remove", Path: op.From}).apply(doc); err != nil {
				return nil, err
			}
		} else {
			v = normalizeJSON(v) // a copy, not an alias
		}
		return (jsonPatchOp{Op: "add", Path: op.Path, Value: v}).apply(doc)
	}
	parts, err := pointerParts(op.Path)
	if err != nil {
		return nil, err
	}
	parent, err := walkPointer(doc, parts[:len(parts)-1])
	if err != nil {
		return nil, err
	}
	last := parts[len(parts)-1]
	switch c := parent.(type) {
	case map[string]any:
		return doc, op.onMap(c, last)
	case []any:
		updated, err := op.onSlice(c, last)
		if err != nil {
			return nil, err
		}
		if len(parts) == 1 {
			return updated, nil
		}
		grand, _ := walkPointer(doc, parts[:len(parts)-2])
		return doc, setChild(grand, parts[len(parts)-2], updated)
	}
	return nil, fmt.Errorf("path does not name a container")
}

// pointerParts splits a JSON pointer into its unescaped segments.
func pointerParts(p string) ([]string, error) {
	if p == "" || p[0] != '/' {
		return nil, fmt.Errorf("path must start with '/'")
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}

func (op jsonPatchOp) onMap(m map[string]any, key string) error {
	cur, exists := m[key]
	switch op.Op {
	case "add":
		m[key] = op.Value
	case "replace": // the real server replaces a missing member too: it adds it
		m[key] = op.Value
	case "remove":
		if !exists {
			return fmt.Errorf("missing value to remove")
		}
		delete(m, key)
	case "test":
		if !reflect.DeepEqual(normalizeJSON(cur), normalizeJSON(op.Value)) {
			return fmt.Errorf("test failed")
		}
	default:
		return fmt.Errorf("unsupported operation %q", op.Op)
	}
	return nil
}

func (op jsonPatchOp) onSlice(s []any, idx string) ([]any, error) {
	i := len(s)
	if idx != "-" {
		n, err := strconv.Atoi(idx)
		if err != nil || n < 0 || n > len(s) || (op.Op != "add" && n == len(s)) {
			return nil, fmt.Errorf("index %q out of range", idx)
		}
		i = n
	}
	switch op.Op {
	case "add":
		s = append(s, nil)
		copy(s[i+1:], s[i:])
		s[i] = op.Value
	case "replace":
		s[i] = op.Value
	case "remove":
		s = append(s[:i], s[i+1:]...)
	case "test":
		if !reflect.DeepEqual(normalizeJSON(s[i]), normalizeJSON(op.Value)) {
			return nil, fmt.Errorf("test failed")
		}
	default:
		return nil, fmt.Errorf("unsupported operation %q", op.Op)
	}
	return s, nil
}

func walkPointer(doc any, parts []string) (any, error) {
	cur := doc
	for _, p := range parts {
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[p]
			if !ok {
				return nil, fmt.Errorf("path segment %q not found", p)
			}
			cur = next
		case []any:
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 || n >= len(c) {
				return nil, fmt.Errorf("index %q out of range", p)
			}
			cur = c[n]
		default:
			return nil, fmt.Errorf("path segment %q is not inside a container", p)
		}
	}
	return cur, nil
}

func setChild(parent any, key string, v any) error {
	switch c := parent.(type) {
	case map[string]any:
		c[key] = v
		return nil
	case []any:
		n, err := strconv.Atoi(key)
		if err != nil || n < 0 || n >= len(c) {
			return fmt.Errorf("index %q out of range", key)
		}
		c[n] = v
		return nil
	}
	return fmt.Errorf("not a container")
}

// normalizeJSON re-encodes a value so numbers compare equal however they were decoded.
func normalizeJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
