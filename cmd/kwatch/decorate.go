package main

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
	"github.com/kwatch/kwatch/watch"
)

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
	opts := watch.ListOptions{Limit: max(o.chunkSize, 0)}
	_, err := watch.ListEach(ctx, t.client, t.res, scope(t, o), opts, func(r *printers.Raw) error {
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
