package webhook

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	jsoniter "github.com/json-iterator/go"

	"github.com/kwatch/kwatch/internal/jsonpatch"
)

// numbersJSON decodes numbers as json.Number (their text), so that a
// number the handler did not touch compares equal however it was written;
// json-iterator, as the rest of kwatch decodes, for its speed.
var numbersJSON = jsoniter.Config{UseNumber: true}.Froze()

// decodeNumbers decodes a JSON document for a diff, refusing what the API
// server would not take: JSON is UTF-8 (RFC 8259), and json-iterator keeps
// invalid bytes in strings where encoding/json (and so the API server, and
// the patch's own encoding) turns them into U+FFFD, so that a patch's member
// names would not be the object's; and json-iterator stops at the end of
// the first value where the API server refuses what follows ("00").
func decodeNumbers(doc []byte) (any, error) {
	if !utf8.Valid(doc) {
		return nil, fmt.Errorf("not valid UTF-8")
	}
	if !json.Valid(doc) {
		return nil, fmt.Errorf("not valid JSON")
	}
	var v any
	if err := numbersJSON.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	if err := checkNumbers(v); err != nil {
		return nil, err
	}
	return v, nil
}

// checkNumbers refuses a number that is neither an int64 nor a finite
// float64 (a 400-digit integer, 1e999): the API server's decoder of
// unstructured JSON refuses it too, and the patch would carry it where
// encoding/json cannot read it. It visits each value once, as deep as the
// decoder went (json-iterator bounds its depth).
func checkNumbers(v any) error {
	switch v := v.(type) {
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return nil
		}
		if _, err := v.Float64(); err != nil {
			return fmt.Errorf("the number %.40s is out of range", string(v))
		}
	case map[string]any:
		for _, e := range v {
			if err := checkNumbers(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range v {
			if err := checkNumbers(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// mutationPatch is the encoded patch that makes raw (the object as the API
// server sent it) show a handler's change from before to after (the typed
// object's encodings). The diff of before and after names only what the
// handler changed; each operation is then anchored in raw, whose members
// may differ from the typed encoding's (T leaves out fields it does not
// know, or writes zero values raw does not have): an object member is set
// with add (which also replaces, RFC 6902 4.1), a removal of what raw does
// not have is dropped, and a change under a member raw lacks becomes one
// add of the outermost missing member. Nil when nothing changed.
func mutationPatch(raw, before, after []byte) ([]byte, error) {
	b, err := decodeNumbers(before)
	if err != nil {
		return nil, fmt.Errorf("webhook: diff: the object before: %w", err)
	}
	afterDoc, err := decodeNumbers(after)
	if err != nil {
		return nil, fmt.Errorf("webhook: diff: the object after: %w", err)
	}
	ops := jsonpatch.Diff(b, afterDoc)
	if len(ops) == 0 {
		return nil, nil
	}
	doc, err := decodeNumbers(raw)
	if err != nil {
		return nil, fmt.Errorf("webhook: the object sent: %w", err)
	}
	out := make([]jsonpatch.Op, 0, len(ops))
	var lifted []string
	for _, op := range ops {
		segs, err := jsonpatch.Split(op.Path)
		if err != nil {
			return nil, err
		}
		n, parent := existing(doc, segs)
		switch {
		case covered(lifted, op.Path):
		case op.Op == "remove":
			if n == len(segs) {
				out = append(out, op)
			}
		case n >= len(segs)-1:
			if _, isObj := parent.(map[string]any); isObj {
				op.Op = "add"
			}
			out = append(out, op)
		default:
			path := jsonpatch.Join(segs[:n+1])
			v, _ := jsonpatch.Lookup(afterDoc, segs[:n+1])
			out = append(out, jsonpatch.Op{Op: "add", Path: path, Value: v})
			lifted = append(lifted, path)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return json.Marshal(out)
}

// existing returns how many leading segments of a path exist in doc, and
// the container of the last existing one's child (the parent of segs[n]).
func existing(doc any, segs []string) (int, any) {
	cur := doc
	for i, s := range segs {
		next, ok := jsonpatch.Child(cur, s)
		if !ok {
			return i, cur
		}
		if i == len(segs)-1 {
			return len(segs), cur
		}
		cur = next
	}
	return len(segs), nil
}

func covered(prefixes []string, path string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}
