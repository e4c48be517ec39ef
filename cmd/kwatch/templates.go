package main

import (
	"fmt"
	"io"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
)

// singleObject: the command names one object and lists once, so JSON,
// YAML and templates print the object itself, not a List of it, as
// kubectl does.
func singleObject(o *getOptions) bool {
	return len(o.requests) == 1 && len(o.names) == 1 && !o.watch
}

// templateSink prints -o jsonpath and -o custom-columns. Listing once, it
// prints at close: a jsonpath template sees one List of every object (or
// the object itself when one was named), custom columns align every row.
// Watching, each change is printed as it comes, the template applied to
// the object (or, with --output-watch-events, to {"type", "object"}).
type templateSink struct {
	out     io.Writer
	o       *getOptions
	jp      *printers.JSONPath      // -o jsonpath
	cols    *printers.CustomColumns // -o custom-columns
	items   []any                   // listing once: everything, in order
	started bool                    // custom columns: the header is printed
	batches int                     // writes so far
}

func newTemplateSink(out io.Writer, o *getOptions) (*templateSink, error) {
	s := &templateSink{out: out, o: o}
	var err error
	if o.format == formatJSONPath {
		s.jp, err = printers.ParseJSONPath(o.template)
		if err == nil {
			s.jp.AllowMissing = o.allowMissing
		}
	} else if o.templateFile {
		s.cols, err = printers.ParseCustomColumnsFile(o.template)
	} else {
		s.cols, err = printers.ParseCustomColumns(o.template)
	}
	if err != nil {
		return nil, usagef("%v", err)
	}
	return s, nil
}

func (s *templateSink) write(batch []change[*printers.Raw]) error {
	s.batches++
	vals := make([]any, 0, len(batch))
	for _, c := range batch {
		v, err := printers.DecodeJSON(c.obj.JSON)
		if err != nil {
			return fmt.Errorf("printing %s: %w", c.obj.GetName(), err)
		}
		if s.o.watchEvents {
			v = map[string]any{"type": string(c.typ), "object": v}
		}
		vals = append(vals, v)
	}
	if !s.o.watch {
		s.items = append(s.items, vals...)
		return nil
	}
	return s.print(vals)
}

// print writes objects one by one (watching).
func (s *templateSink) print(vals []any) error {
	if s.jp != nil {
		for _, v := range vals {
			if err := s.jp.Execute(s.out, v); err != nil {
				return err
			}
		}
		return nil
	}
	rows, err := s.rows(vals)
	if err != nil || len(rows) == 0 {
		return err
	}
	noHeaders := s.o.noHeaders || s.started
	s.started = true
	return printers.WriteColumns(s.out, s.cols.Headers, rows, noHeaders)
}

func (s *templateSink) rows(vals []any) ([][]string, error) {
	rows := make([][]string, 0, len(vals))
	for _, v := range vals {
		cells, err := s.cols.Cells(v)
		if err != nil {
			return nil, err
		}
		rows = append(rows, cells)
	}
	return rows, nil
}

func (s *templateSink) close() error {
	if s.o.watch {
		return nil
	}
	if s.jp != nil {
		var data any
		if singleObject(s.o) && len(s.items) == 1 {
			data = s.items[0]
		} else {
			data = map[string]any{"apiVersion": "v1", "kind": "List", "items": s.items,
				"metadata": map[string]any{"resourceVersion": ""}}
		}
		return s.jp.Execute(s.out, data)
	}
	if len(s.items) == 0 {
		return nil
	}
	rows, err := s.rows(s.items)
	if err != nil {
		return err
	}
	return printers.WriteColumns(s.out, s.cols.Headers, rows, s.o.noHeaders)
}
