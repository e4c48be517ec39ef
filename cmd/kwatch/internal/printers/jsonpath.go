package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// JSONPath is a kubectl output template (-o jsonpath=...): text with
// expressions in braces, each printed where it stands. The syntax is
// kubectl's:
//
//   - {.metadata.name}: a field; {.metadata.labels.app\.kubernetes\.io/name}
//     and {.metadata.labels['app.kubernetes.io/name']} for keys with dots
//   - {.items[0]}, {.items[-1]}, {.items[1:3]}, {.items[::2]}, {.items[*]},
//     {.a.*}: indexes, slices and wildcards
//   - {.items[0,2]}, {.spec['nodeName','hostname']}: unions
//   - {..name}: every "name" at any depth
//   - {.items[?(@.status.phase=="Running")]}: filters with ==, !=, <, <=,
//     >, >= against a string, number, boolean or another @ or $ path; a
//     bare path tests that the field exists
//   - {range .items[*]}...{end}: the body once per result, relative to it
//   - {"\n"}, {"\t"}: string literals; $ is the root, @ the current node
//
// Several results of one expression print separated by spaces; maps and
// lists print as compact JSON, strings as they are. A missing field prints
// nothing when AllowMissing is set (kubectl's
// --allow-missing-template-keys, true by default) and is an error
// otherwise. The zero value is an empty template. A JSONPath is safe for
// concurrent use once parsed.
type JSONPath struct {
	text  string
	nodes []tnode
	// AllowMissing prints nothing for a field that is not there.
	AllowMissing bool
}

// tnode is one piece of a template: literal text, an expression or a
// range.
type tnode struct {
	text    string // literal, when path is nil and body is nil
	literal bool
	path    []step
	body    []tnode // for range: the nodes up to {end}
	isRange bool
}

// ParseJSONPath parses a template. Errors name the offset and what was
// expected there.
func ParseJSONPath(text string) (*JSONPath, error) {
	p := &tparser{src: text}
	nodes, err := p.nodes(false)
	if err != nil {
		return nil, fmt.Errorf("jsonpath %q: %w", text, err)
	}
	return &JSONPath{text: text, nodes: nodes, AllowMissing: true}, nil
}

// Text is the template as given.
func (j *JSONPath) Text() string { return j.text }

// Execute prints the template for data, a value decoded from JSON with
// DecodeJSON (maps, slices, strings, int64, float64, bools, nil).
func (j *JSONPath) Execute(w io.Writer, data any) error {
	var b bytes.Buffer
	ev := &evaluator{root: data, allowMissing: j.AllowMissing}
	if err := ev.run(&b, j.nodes, data); err != nil {
		return fmt.Errorf("error executing jsonpath %q: %w", j.text, err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Find evaluates a template of a single expression ("{.status.phase}")
// and returns its results, for sorting and custom columns.
func (j *JSONPath) Find(data any) ([]any, error) {
	ev := &evaluator{root: data, allowMissing: j.AllowMissing}
	var all []any
	for _, n := range j.nodes {
		if n.path == nil {
			continue
		}
		vals, err := ev.eval(n.path, []any{data})
		if err != nil {
			return nil, err
		}
		all = append(all, vals...)
	}
	return all, nil
}

// DecodeJSON decodes b as kubectl's unstructured objects hold it: whole
// numbers as int64, others as float64.
func DecodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return numbers(v), nil
}

func numbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, e := range t {
			t[k] = numbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = numbers(e)
		}
	}
	return v
}

// FormatValue prints one result as kubectl's jsonpath does: maps and
// lists as compact JSON, null as "null", everything else as fmt prints it.
func FormatValue(v any) string {
	switch v.(type) {
	case map[string]any, []any:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

// evaluator runs a template against one root value.
type evaluator struct {
	root         any
	allowMissing bool
}

func (ev *evaluator) run(w *bytes.Buffer, nodes []tnode, cur any) error {
	for _, n := range nodes {
		switch {
		case n.isRange:
			vals, err := ev.eval(n.path, []any{cur})
			if err != nil {
				return err
			}
			for _, v := range vals {
				if err := ev.run(w, n.body, v); err != nil {
					return err
				}
			}
		case n.path == nil:
			w.WriteString(n.text)
		default:
			vals, err := ev.eval(n.path, []any{cur})
			if err != nil {
				return err
			}
			for i, v := range vals {
				if i > 0 {
					w.WriteByte(' ')
				}
				w.WriteString(FormatValue(v))
			}
		}
	}
	return nil
}
