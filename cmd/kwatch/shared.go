package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
)

// sharedOutput is one sink for every resource type of the command when
// kubectl prints them as one document: a List of all of them (-o json,
// yaml, jsonpath) or one set of custom columns, and, with --sort-by, names
// too, sorted across the types. Each type's run writes to it without
// closing it; runGet finishes it after the last.
type sharedOutput struct {
	inner sink[*printers.Raw]
	out   *bufio.Writer
	// sortBy, when set, holds every object back (held) until finish sorts
	// them all.
	sortBy *printers.JSONPath
	held   []change[*printers.Raw]
}

func (s *sharedOutput) write(batch []change[*printers.Raw]) error {
	if s.sortBy != nil {
		s.held = append(s.held, batch...)
		return nil
	}
	return s.inner.write(batch)
}

func (*sharedOutput) close() error { return nil }

// newSharedOutput returns the shared sink for o, or nil when each type
// prints on its own (tables, unsorted names, a single type, watching).
func newSharedOutput(w io.Writer, o *getOptions) (*sharedOutput, error) {
	if len(o.requests) < 2 || o.watch {
		return nil, nil
	}
	out := bufio.NewWriterSize(w, 64<<10)
	s := &sharedOutput{out: out}
	switch o.format {
	case formatJSON, formatYAML:
		s.inner = &streamSink[*printers.Raw]{stream: newStream(out, o, &target{}), raw: func(r *printers.Raw) []byte { return r.JSON }}
	case formatJSONPath, formatCustomColumns:
		t, err := newTemplateSink(out, o)
		if err != nil {
			return nil, err
		}
		s.inner = t
	case formatName:
		if o.sortBy == "" {
			return nil, nil
		}
		s.inner = &rawNames{out: out}
	default:
		return nil, nil
	}
	if o.sortBy != "" {
		tmpl, err := printers.RelaxedPath(o.sortBy)
		if err == nil {
			s.sortBy, err = printers.ParseJSONPath(tmpl)
		}
		if err != nil {
			return nil, usagef("--sort-by: %v", err)
		}
	}
	return s, nil
}

// finish sorts what was held, closes the shared sink and flushes.
func (s *sharedOutput) finish() error {
	if s.sortBy != nil {
		keys := make([]any, len(s.held))
		for i, c := range s.held {
			v, err := printers.DecodeJSON(c.obj.JSON)
			if err != nil {
				return err
			}
			if keys[i], err = printers.SortKey(s.sortBy, v); err != nil {
				return fmt.Errorf("--sort-by: %w", err)
			}
		}
		if err := printers.SortStable(s.held, keys); err != nil {
			return err
		}
		if err := s.inner.write(s.held); err != nil {
			return err
		}
	}
	if err := s.inner.close(); err != nil {
		return err
	}
	return s.out.Flush()
}

// rawNames is -o name for objects of several types: each named by the
// kind and group its JSON gives, "pod/web-1", "deployment.apps/web".
type rawNames struct{ out io.Writer }

func (n *rawNames) write(batch []change[*printers.Raw]) error {
	for _, c := range batch {
		var tm struct{ APIVersion, Kind string }
		if err := json.Unmarshal(c.obj.JSON, &tm); err != nil {
			return fmt.Errorf("printing %s: %w", c.obj.GetName(), err)
		}
		kind := strings.ToLower(tm.Kind)
		if group, _, ok := strings.Cut(tm.APIVersion, "/"); ok {
			kind += "." + group
		}
		if _, err := io.WriteString(n.out, kind+"/"+c.obj.GetName()+"\n"); err != nil {
			return err
		}
	}
	return nil
}

func (*rawNames) close() error { return nil }
