package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
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

// streamSink prints changes as JSON or YAML documents or names.
type streamSink[T watch.Object] struct {
	stream *printers.Stream
	raw    func(T) []byte
}

func (s *streamSink[T]) write(batch []change[T]) error {
	for _, c := range batch {
		if err := s.stream.Write(string(c.typ), c.obj.GetName(), s.raw(c.obj)); err != nil {
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
}

func newServerTable(out io.Writer, e *env, o *getOptions, t *target) *serverTable {
	// No minimum widths (mins): kubectl sizes a watched table to its first
	// rows too.
	return &serverTable{out: out, e: e, o: o, t: t, wide: o.output == "wide", empty: noResources(e, o, t)}
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
		s.start(firstColumns(batch))
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
// sorted, so the row that came with them may be anywhere in it.
func firstColumns(batch []change[*printers.ServerRow]) []printers.Column {
	for _, c := range batch {
		if cols := rowColumns(c.obj); cols != nil {
			return cols
		}
	}
	// No row says (a watch joined mid-stream cannot happen: the informer
	// lists first); name the cells by position rather than lose them.
	n := len(batch[0].obj.Cells)
	cols := make([]printers.Column, n)
	for i := range cols {
		cols[i] = printers.Column{Name: "Column " + strconv.Itoa(i+1)}
	}
	return cols
}

func sameColumns(a, b []printers.Column) bool { return slices.Equal(a, b) }

// noResources is kubectl's message for an empty list printed once; nil
// while watching, where the header shows that kwatch waits for changes.
func noResources(e *env, o *getOptions, t *target) func() {
	if o.watch || o.ignoreNotFound { // kubectl says nothing with --ignore-not-found
		return nil
	}
	msg := "No resources found"
	if t.namespace != "" {
		msg += " in " + t.namespace + " namespace"
	}
	return func() { fmt.Fprintln(e.stderr, msg+".") }
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
	s := &printers.Stream{W: out, Events: o.watchEvents, Kind: kindName(t.res)}
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
