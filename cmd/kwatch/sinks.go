package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
	"github.com/kwatch/kwatch/internal/jsonpatch"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// tableSink prints changes as table rows.
type tableSink[T any] struct {
	table *printers.Table
	cells func(obj T, now time.Time) []string
	// empty, when set, replaces the header of an empty first batch: listing
	// once, kubectl says "No resources found" on stderr and prints nothing.
	empty func()
}

func (s *tableSink[T]) write(batch []change[T]) error {
	if len(batch) == 0 && !s.table.Started() && s.empty != nil {
		s.empty()
		return nil
	}
	now := time.Now()
	rows := make([]printers.Row, len(batch))
	for i, c := range batch {
		rows[i] = printers.Row{Cells: s.cells(c.obj, now)}
		if s.table.Event {
			rows[i].Event = string(c.typ)
		}
	}
	return s.table.Write(rows)
}

func (s *tableSink[T]) close() error { return nil }

// streamSink prints changes as JSON or YAML documents or names. With
// patch (--diff), each MODIFIED watch event carries the JSON patch from the
// version printed before it.
type streamSink[T watch.Object] struct {
	stream *printers.Stream
	raw    func(T) []byte
	patch  bool
}

func (s *streamSink[T]) write(batch []change[T]) error {
	for _, c := range batch {
		extra := printers.EventExtra{Relisted: c.relisted}
		if s.patch && c.typ == watch.Modified && c.hasOld {
			old, new, err := versions(c)
			if err != nil {
				return fmt.Errorf("--diff of %s: %w", c.obj.GetName(), err)
			}
			ops := jsonpatch.Diff(old, new)
			if ops == nil {
				ops = []jsonpatch.Op{}
			}
			extra.Patch = ops
		}
		if err := s.stream.WriteEvent(string(c.typ), c.obj.GetName(), s.raw(c.obj), extra); err != nil {
			return err
		}
	}
	return nil
}

func (s *streamSink[T]) close() error { return s.stream.Close() }

// newTable builds the table for o's output, with NAMESPACE first for -A.
// Minimum widths apply only while watching; otherwise, and while watching
// without them, columns are sized to the first rows and grow when a longer
// cell comes, as kubectl's are, so that kwatch prints kubectl's bytes.
func newTable(out io.Writer, e *env, o *getOptions, t *target, headers []string, mins []int) *printers.Table {
	if !o.watch {
		mins = nil
	}
	if t.allNamespaces {
		headers = append([]string{"NAMESPACE"}, headers...)
		mins = append([]int{0}, mins...)
	}
	return &printers.Table{W: out, Headers: headers, MinWidths: mins, Event: o.watchEvents,
		Color: e.useColor(), NoHeader: o.noHeaders}
}

// withNamespace puts the namespace before a row when -A shows it.
func withNamespace(t *target, ns string, row []string) []string {
	if !t.allNamespaces {
		return row
	}
	return append([]string{ns}, row...)
}

// serverTable prints the server's Table rows (informer.Options.Table) as
// kubectl prints them: the columns the server defines, priority-1 ones only
// with -o wide, headers upper-cased. The columns come with the rows (a list
// page's first row, a watch's first event), so the table starts with the
// first batch that has a row; an empty list prints no header, as kubectl's
// does not. Rows of a server that cannot print Tables get NAME and AGE.
type serverTable struct {
	out  io.Writer
	e    *env
	o    *getOptions
	t    *target
	wide bool
	mins map[string]int // minimum widths by header; nil for none
	// empty, when set, is called for an empty first batch instead.
	empty func()

	cols  []printers.Column // the columns being printed; nil before the first row
	shown []int             // indexes of cols shown
	table *printers.Table   // nil before the first row
	// columns asks the server for its columns when the first rows came
	// without them (serverColumns).
	columns func() ([]printers.Column, error)
}

func newServerTable(ctx context.Context, out io.Writer, e *env, o *getOptions, t *target) *serverTable {
	// No minimum widths (mins): kubectl sizes a watched table to its first
	// rows too.
	return &serverTable{out: out, e: e, o: o, t: t, wide: o.output == "wide", empty: noResources(e, o, t),
		columns: func() ([]printers.Column, error) { return serverColumns(ctx, t, o) }}
}

func (s *serverTable) write(batch []change[*printers.ServerRow]) error {
	if len(batch) == 0 {
		if s.table == nil && s.empty != nil {
			s.empty()
			s.empty = nil
		}
		return nil
	}
	if s.cols == nil {
		s.start(firstColumns(batch, s.columns))
	}
	now := time.Now()
	rows := make([]printers.Row, 0, len(batch))
	for _, c := range batch {
		r := c.obj
		if cols := rowColumns(r); cols != nil && !sameColumns(cols, s.cols) {
			// The server's columns changed (a CRD's printer columns were
			// edited): a new header, as kubectl prints one.
			if err := s.table.Write(rows); err != nil {
				return err
			}
			rows = rows[:0]
			s.start(cols)
		}
		cells := r.Cells
		if r.Fallback {
			cells = r.FallbackCells(now)
		}
		cells = append(slices.Clip(withKind(s.o, s.t, printers.Pick(cells, s.shown))), extraCells(s.o, r.Labels)...)
		row := printers.Row{Cells: withNamespace(s.t, r.Namespace, cells)}
		if s.table.Event {
			row.Event = string(c.typ)
		}
		rows = append(rows, row)
	}
	return s.table.Write(rows)
}

func (s *serverTable) close() error { return nil }

// start begins a table with cols.
func (s *serverTable) start(cols []printers.Column) {
	s.cols = cols
	s.shown = printers.Visible(cols, s.wide)
	headers := append(printers.Headers(cols, s.shown), extraHeaders(s.o)...)
	var mins []int
	if s.mins != nil {
		mins = make([]int, len(headers))
		for i, h := range headers {
			mins[i] = s.mins[h]
		}
	}
	s.table = newTable(s.out, s.e, s.o, s.t, headers, mins)
}

// rowColumns are the columns a row came with: the server's, or the
// fallback ones for an object the server did not print.
func rowColumns(r *printers.ServerRow) []printers.Column {
	if r.Fallback {
		return printers.FallbackColumns
	}
	return r.Columns
}

// firstColumns finds the columns of a batch: the initial list arrives
// sorted, so the row that came with them may be anywhere in it. When no
// row has them (the watch began with no object, and its events need not
// carry them), the server is asked (ask, serverColumns); only if that
// fails are the cells named by position rather than lost.
func firstColumns(batch []change[*printers.ServerRow], ask func() ([]printers.Column, error)) []printers.Column {
	for _, c := range batch {
		if cols := rowColumns(c.obj); cols != nil {
			return cols
		}
	}
	if ask != nil {
		if cols, err := ask(); err == nil && cols != nil {
			return cols
		}
	}
	return positionalColumns(len(batch[0].obj.Cells))
}

func sameColumns(a, b []printers.Column) bool { return slices.Equal(a, b) }

// noResources is kubectl's message for an empty list printed once; nil
// while watching, where the header shows that kwatch waits for changes.
// Of several types it only counts the empty one: runGet says it once if
// all were.
func noResources(e *env, o *getOptions, t *target) func() {
	if o.watch || o.ignoreNotFound { // kubectl says nothing with --ignore-not-found
		return nil
	}
	msg := "No resources found" // kubectl's period comes with a namespace only
	if t.namespace != "" {
		msg += " in " + t.namespace + " namespace."
	}
	if len(o.requests) > 1 {
		return func() {
			if o.emptyTypes > 0 && o.noneFound != msg { // a cluster-scoped type among them: kubectl names no namespace
				msg = "No resources found"
			}
			o.emptyTypes, o.noneFound = o.emptyTypes+1, msg
		}
	}
	return func() { fmt.Fprintln(e.stderr, msg) }
}

// kindName is how -o name names a resource's objects: "pod",
// "deployment.apps".
func kindName(r kube.Resource) string {
	k := strings.ToLower(r.Kind)
	if k == "" {
		k = r.Resource
	}
	if r.Group != "" {
		k += "." + r.Group
	}
	return k
}

// newStream builds the JSON, YAML or name stream for o's output.
func newStream(out io.Writer, o *getOptions, t *target) *printers.Stream {
	s := &printers.Stream{W: out, Events: o.watchEvents, Kind: kindName(t.res), DropManagedFields: o.dropManaged}
	switch o.output {
	case "yaml":
		s.Format = printers.FormatYAML
	case "name":
		s.Format = printers.FormatName
	}
	// Listing once prints one List document, as kubectl does; watching or
	// asking for watch events prints one document per change.
	s.List = !o.watch && !o.watchEvents && !singleObject(o)
	return s
}

func slicesClone[S ~[]E, E any](s S) S { return append(S(nil), s...) }
