package sim

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Patch media types the server accepts.
const (
	mediaMergePatch     = "application/merge-patch+json"
	mediaStrategicPatch = "application/strategic-merge-patch+json"
	mediaJSONPatch      = "application/json-patch+json"
)

// applyPatch applies a patch document of the given media type to a decoded object.
// Strategic merge patches are applied as JSON merge patches after dropping their
// "$"-directives: maps merge, lists are replaced (the simulator knows no merge keys).
func applyPatch(target map[string]any, patch []byte, mediaType string) (map[string]any, error) {
	switch mediaType {
	case mediaMergePatch, mediaStrategicPatch:
		var p any
		if err := json.Unmarshal(patch, &p); err != nil {
			return nil, fmt.Errorf("invalid merge patch: %w", err)
		}
		pm, ok := p.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("invalid merge patch: the document must be a JSON object")
		}
		if mediaType == mediaStrategicPatch {
			stripDirectives(pm)
		}
		out, _ := mergePatch(target, pm).(map[string]any)
		return out, nil
	case mediaJSONPatch:
		var ops []jsonPatchOp
		if err := json.Unmarshal(patch, &ops); err != nil {
			return nil, fmt.Errorf("invalid JSON patch: %w", err)
		}
		var doc any = target
		for i, op := range ops {
			var err error
			if doc, err = op.apply(doc); err != nil {
				return nil, fmt.Errorf("JSON patch operation %d (%s %s): %w", i, op.Op, op.Path, err)
			}
		}
		out, ok := doc.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("JSON patch must leave an object")
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported patch type %q", mediaType)
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

func stripDirectives(m map[string]any) {
	for k, v := range m {
		if strings.HasPrefix(k, "$") {
			delete(m, k)
			continue
		}
		if sub, ok := v.(map[string]any); ok {
			stripDirectives(sub)
		}
	}
}

// jsonPatchOp is one RFC 6902 operation (add, remove, replace, test).
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

func (op jsonPatchOp) apply(doc any) (any, error) {
	if op.Path == "" || op.Path[0] != '/' {
		return nil, fmt.Errorf("path must start with '/'")
	}
	parts := strings.Split(op.Path[1:], "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
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

func (op jsonPatchOp) onMap(m map[string]any, key string) error {
	cur, exists := m[key]
	switch op.Op {
	case "add":
		m[key] = op.Value
	case "replace":
		if !exists {
			return fmt.Errorf("missing value to replace")
		}
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
