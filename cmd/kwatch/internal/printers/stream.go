package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// Format is an object output format (-o json, -o yaml, -o name).
type Format int

// The object formats.
const (
	FormatJSON Format = iota
	FormatYAML
	FormatName
)

// Stream writes objects one after another, as kubectl prints them:
//   - JSON: each object indented by four spaces; with Events, each wrapped
//     in a watch event {"type": ..., "object": ...}; with List, the objects
//     become the items of one {"kind": "List"} document, ended by Close.
//   - YAML: the same, documents separated by "---" lines.
//   - Name: "kind/name" per line ("deployment.apps/web"), prefixed by the
//     event type with Events.
//
// Objects are printed with sorted keys and without metadata.managedFields,
// as kubectl does, except in watch events (Events, not List), which kubectl
// prints with managedFields kept, one line of JSON each; DropManagedFields
// leaves them out there too. Each object is one Write call on W. The zero
// value (with W set) prints JSON. A Stream is not safe for concurrent use.
type Stream struct {
	W      io.Writer
	Format Format
	Events bool
	List   bool
	// Kind names objects for FormatName: "pod", "deployment.apps".
	Kind string
	// DropManagedFields leaves metadata.managedFields out of watch events.
	DropManagedFields bool

	n int // objects written
}

// watchEvent is a watch event as kubectl prints it: type first. Patch and
// Relisted are kwatch's (WriteEvent), absent unless set.
type watchEvent struct {
	Type     string `json:"type"`
	Object   any    `json:"object"`
	Patch    any    `json:"patch,omitempty"`
	Relisted bool   `json:"relisted,omitempty"`
}

// EventExtra is what a watch event may carry beside its object: the JSON
// patch from the version printed before (kwatch --diff), and whether a
// relist computed the change. The zero value adds nothing.
type EventExtra struct {
	Patch    any
	Relisted bool
}

// Write prints one object given as the server's JSON (or, for FormatName,
// only its name is used).
func (s *Stream) Write(event, name string, raw []byte) error {
	return s.WriteEvent(event, name, raw, EventExtra{})
}

// WriteEvent is Write with extra fields for a watch event (with Events).
func (s *Stream) WriteEvent(event, name string, raw []byte, extra EventExtra) error {
	var out []byte
	var err error
	switch s.Format {
	case FormatName:
		out = s.nameLine(event, name)
	case FormatYAML:
		out, err = s.yamlDoc(event, raw, extra)
	default:
		out, err = s.jsonDoc(event, raw, extra)
	}
	if err != nil {
		return fmt.Errorf("printing %s: %w", name, err)
	}
	s.n++
	_, err = s.W.Write(out)
	return err
}

// Close ends a List document; without List it writes nothing.
func (s *Stream) Close() error {
	if !s.List || s.Format == FormatName {
		return nil
	}
	var tail string
	switch {
	case s.Format == FormatYAML && s.n == 0:
		tail = "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n"
	case s.Format == FormatYAML:
		tail = "kind: List\nmetadata:\n  resourceVersion: \"\"\n"
	case s.n == 0:
		tail = "{\n    \"apiVersion\": \"v1\",\n    \"items\": [],\n    \"kind\": \"List\",\n" + jsonListMeta
	default:
		tail = "\n    ],\n    \"kind\": \"List\",\n" + jsonListMeta
	}
	_, err := io.WriteString(s.W, tail)
	return err
}

const jsonListMeta = "    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n"

func (s *Stream) nameLine(event, name string) []byte {
	line := s.Kind + "/" + name + "\n"
	if s.Events && event != "" {
		line = event + " " + line
	}
	return []byte(line)
}

// events: each object is printed as a watch event.
func (s *Stream) events() bool { return s.Events && !s.List }

func (s *Stream) value(event string, raw []byte, extra EventExtra) (any, error) {
	obj, err := decodeObject(raw, !s.events() || s.DropManagedFields)
	if err != nil {
		return nil, err
	}
	if s.events() {
		return watchEvent{Type: event, Object: obj, Patch: extra.Patch, Relisted: extra.Relisted}, nil
	}
	return obj, nil
}

func (s *Stream) jsonDoc(event string, raw []byte, extra EventExtra) ([]byte, error) {
	v, err := s.value(event, raw, extra)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if s.events() { // kubectl prints a watch event on one line
		// HTML characters escaped (\u003c), as kubectl's encoder does.
		err := json.NewEncoder(&b).Encode(v)
		return b.Bytes(), err
	}
	prefix := ""
	switch {
	case s.List && s.n == 0:
		b.WriteString("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        ")
		prefix = "        "
	case s.List:
		b.WriteString(",\n        ")
		prefix = "        "
	}
	enc := json.NewEncoder(&b) // escaping HTML characters, as kubectl's does
	enc.SetIndent(prefix, "    ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if s.List {
		b.Truncate(b.Len() - 1) // the item's newline comes with the next separator
	}
	return b.Bytes(), nil
}

func (s *Stream) yamlDoc(event string, raw []byte, extra EventExtra) ([]byte, error) {
	v, err := s.value(event, raw, extra)
	if err != nil {
		return nil, err
	}
	y, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	if !s.List {
		if s.n > 0 {
			return append([]byte("---\n"), y...), nil
		}
		return y, nil
	}
	var b strings.Builder
	if s.n == 0 {
		b.WriteString("apiVersion: v1\nitems:\n")
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(y), "\n"), "\n")
	for i, l := range lines {
		if i == 0 {
			b.WriteString("- ")
		} else {
			b.WriteString("  ")
		}
		b.WriteString(l)
	}
	b.WriteByte('\n')
	return []byte(b.String()), nil
}
