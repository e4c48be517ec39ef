package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
	"github.com/kwatch/kwatch/watch"
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

// namesOnly passes on only the named objects: several names are listed
// whole, a field selector cannot ask for "one of".
type namesOnly[T watch.Object] struct {
	sink[T]
	names []string
}

func (n *namesOnly[T]) write(batch []change[T]) error {
	kept := batch[:0:0]
	for _, c := range batch {
		if slices.Contains(n.names, c.obj.GetName()) {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 && len(batch) > 0 {
		return nil
	}
	// kubectl prints named objects in the order they were named.
	slices.SortStableFunc(kept, func(a, b change[T]) int {
		return slices.Index(n.names, a.obj.GetName()) - slices.Index(n.names, b.obj.GetName())
	})
	if len(kept) > 0 {
		kept[0].obj = carryColumns(kept[0].obj, batch)
	}
	return n.sink.write(kept)
}

// carryColumns keeps a server Table's column definitions, which come with
// the first row of a list only, when that row is filtered out: it returns
// a shallow copy of obj with the Columns of the batch's first row that has
// them, or obj itself if it has its own or the type has none. Reflection,
// because the row type belongs to the printers and any T passes here.
func carryColumns[T any](obj T, batch []change[T]) T {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return obj
	}
	own := v.Elem().FieldByName("Columns")
	if !own.IsValid() || own.Kind() != reflect.Slice || !own.IsNil() {
		return obj
	}
	for _, c := range batch {
		cols := reflect.ValueOf(c.obj).Elem().FieldByName("Columns")
		if cols.IsNil() {
			continue
		}
		cp := reflect.New(v.Elem().Type())
		cp.Elem().Set(v.Elem())
		cp.Elem().FieldByName("Columns").Set(cols)
		return cp.Interface().(T)
	}
	return obj
}

// skipInitial is --watch-only: the initial list is not printed, only what
// changes after it.
type skipInitial[T any] struct {
	sink[T]
	seen    bool
	initial []change[T] // the skipped list, until a change is printed: it may carry the table's columns
}

func (s *skipInitial[T]) write(batch []change[T]) error {
	if !s.seen {
		s.seen, s.initial = true, batch
		return nil
	}
	if len(batch) > 0 && s.initial != nil {
		batch = slices.Clone(batch)
		batch[0].obj = carryColumns(batch[0].obj, s.initial)
		s.initial = nil
	}
	return s.sink.write(batch)
}

// sortedInitial is --sort-by: the first batch (the initial list) is
// sorted by the path before it is printed, as kubectl sorts what it
// lists; changes after it print as they come. key gives an object's
// sort value.
type sortedInitial[T any] struct {
	sink[T]
	key  func(objs []T) ([]any, error)
	done bool
}

func (s *sortedInitial[T]) write(batch []change[T]) error {
	if s.done || len(batch) < 2 {
		s.done = true
		return s.sink.write(batch)
	}
	s.done = true
	objs := make([]T, len(batch))
	for i, c := range batch {
		objs[i] = c.obj
	}
	keys, err := s.key(objs)
	if err != nil {
		return err
	}
	sorted := slices.Clone(batch)
	if err := printers.SortStable(sorted, keys); err != nil {
		return err
	}
	return s.sink.write(sorted)
}

// sortKeys returns the --sort-by keys of objects. Objects whose JSON the
// command holds (-o json, yaml, templates) are read directly; the table's
// rows carry metadata only, so their objects are listed once more, whole,
// with the command's selectors, and matched by namespace and name.
func sortKeys[T watch.Object](ctx context.Context, t *target, o *getOptions) (func([]T) ([]any, error), error) {
	tmpl, err := printers.RelaxedPath(o.sortBy)
	if err != nil {
		return nil, usagef("--sort-by: %v", err)
	}
	jp, err := printers.ParseJSONPath(tmpl)
	if err != nil {
		return nil, usagef("--sort-by: %v", err)
	}
	return func(objs []T) ([]any, error) {
		byKey, err := fullObjects(ctx, t, o, objs)
		if err != nil {
			return nil, err
		}
		keys := make([]any, len(objs))
		for i, obj := range objs {
			raw, ok := byKey[obj.GetNamespace()+"/"+obj.GetName()]
			if !ok {
				continue
			}
			v, err := printers.DecodeJSON(raw)
			if err != nil {
				return nil, err
			}
			if keys[i], err = printers.SortKey(jp, v); err != nil {
				return nil, fmt.Errorf("--sort-by %s: %w", o.sortBy, err)
			}
		}
		return keys, nil
	}, nil
}

// fullObjects maps namespace/name to each object's JSON: the objects'
// own when they are Raw, else a list from the server.
func fullObjects[T watch.Object](ctx context.Context, t *target, o *getOptions, objs []T) (map[string][]byte, error) {
	out := make(map[string][]byte, len(objs))
	raw := true
	for _, obj := range objs {
		r, ok := any(obj).(*printers.Raw)
		if !ok {
			raw = false
			break
		}
		out[r.GetNamespace()+"/"+r.GetName()] = r.JSON
	}
	if raw {
		return out, nil
	}
	ctx, cancel := withTimeout(ctx, o.requestTimeout)
	defer cancel()
	opts := watch.ListOptions{LabelSelector: o.selector, FieldSelector: fieldSelector(o), Limit: max(o.chunkSize, 0)}
	_, err := watch.ListEach(ctx, t.client, t.res, t.namespace, opts, func(r *printers.Raw) error {
		out[r.GetNamespace()+"/"+r.GetName()] = bytes.Clone(r.JSON)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("--sort-by: listing %s: %w", t.res.Resource, err)
	}
	return out, nil
}

// decorate wraps a view's sink with what the command line asks beyond the
// format: several names, --watch-only, --sort-by.
func decorate[T watch.Object](ctx context.Context, s sink[T], t *target, o *getOptions) (sink[T], error) {
	if o.sortBy != "" {
		key, err := sortKeys[T](ctx, t, o)
		if err != nil {
			return nil, err
		}
		s = &sortedInitial[T]{sink: s, key: key}
	}
	if len(o.names) > 1 {
		s = &namesOnly[T]{sink: s, names: o.names}
	}
	if o.watchOnly {
		s = &skipInitial[T]{sink: s}
	}
	return s, nil
}

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
