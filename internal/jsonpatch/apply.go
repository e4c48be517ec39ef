package jsonpatch

import (
	"fmt"
	"strconv"
)

// Apply applies ops to doc (decoded JSON, changed in place where it can)
// and returns the result. It is strict as the API server is: replace and
// remove need their target to exist, add needs its parent; in an array,
// add inserts before the index (or appends, for "-") and remove shifts
// the rest. An operation that does not fit is an error naming it.
func Apply(doc any, ops []Op) (any, error) {
	for i, op := range ops {
		var err error
		if doc, err = applyOp(doc, op); err != nil {
			return nil, fmt.Errorf("patch operation %d (%s %s): %w", i, op.Op, op.Path, err)
		}
	}
	return doc, nil
}

func applyOp(doc any, op Op) (any, error) {
	toks, err := Split(op.Path)
	if err != nil {
		return nil, err
	}
	switch op.Op {
	case "add", "remove", "replace":
	default:
		return nil, fmt.Errorf("unsupported operation %q", op.Op)
	}
	if len(toks) == 0 {
		if op.Op == "remove" {
			return nil, fmt.Errorf("remove of the whole document")
		}
		return op.Value, nil
	}
	parent, ok := Lookup(doc, toks[:len(toks)-1])
	if !ok {
		return nil, fmt.Errorf("the parent does not exist")
	}
	last := toks[len(toks)-1]
	switch p := parent.(type) {
	case map[string]any:
		return doc, applyMember(p, last, op)
	case []any:
		s, err := applyElement(p, last, op)
		if err != nil {
			return nil, err
		}
		return replaceChild(doc, toks[:len(toks)-1], s), nil
	}
	return nil, fmt.Errorf("the parent is neither an object nor an array")
}

func applyMember(p map[string]any, name string, op Op) error {
	_, exists := p[name]
	switch {
	case op.Op == "add", op.Op == "replace" && exists:
		p[name] = op.Value
	case op.Op == "remove" && exists:
		delete(p, name)
	default:
		return fmt.Errorf("no member %q", name)
	}
	return nil
}

func applyElement(p []any, tok string, op Op) ([]any, error) {
	if op.Op == "add" && tok == "-" {
		return append(p, op.Value), nil
	}
	i, err := strconv.Atoi(tok)
	limit := len(p)
	if op.Op == "add" {
		limit++ // add may insert at the end
	}
	if err != nil || i < 0 || i >= limit || strconv.Itoa(i) != tok {
		return nil, fmt.Errorf("no array element %q", tok)
	}
	switch op.Op {
	case "add":
		p = append(p, nil)
		copy(p[i+1:], p[i:])
		p[i] = op.Value
	case "remove":
		p = append(p[:i], p[i+1:]...)
	default:
		p[i] = op.Value
	}
	return p, nil
}

// replaceChild sets the value at toks (an existing path) to v: an array
// that grew or shrank is a new slice its parent must hold.
func replaceChild(doc any, toks []string, v any) any {
	if len(toks) == 0 {
		return v
	}
	parent, _ := Lookup(doc, toks[:len(toks)-1])
	last := toks[len(toks)-1]
	switch p := parent.(type) {
	case map[string]any:
		p[last] = v
	case []any:
		i, _ := strconv.Atoi(last)
		p[i] = v
	}
	return doc
}

// Child returns the member or element tok of v.
func Child(v any, tok string) (any, bool) {
	switch c := v.(type) {
	case map[string]any:
		x, ok := c[tok]
		return x, ok
	case []any:
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(c) {
			return nil, false
		}
		return c[i], true
	}
	return nil, false
}

// Lookup returns the value at the tokens' path in doc.
func Lookup(doc any, toks []string) (any, bool) {
	cur := doc
	for _, s := range toks {
		var ok bool
		if cur, ok = Child(cur, s); !ok {
			return nil, false
		}
	}
	return cur, true
}
