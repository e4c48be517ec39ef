package main

import (
	"fmt"
	"io"
	"slices"
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

// Column minimums keep a watched table aligned as values change: the
// longest common pod statuses and restart strings fit from the start.
var (
	podMinWidths  = []int{0, 5, len("ContainerCreating"), len("10 (10m ago)"), 5}
	wideMinWidths = []int{len("255.255.255.255"), 0, 0, 0}
)

// newTable builds the table for o's output, with NAMESPACE first for -A.
// Minimum widths apply only while watching; a list printed once is sized
// to its cells, as kubectl sizes it.
func newTable(out io.Writer, e *env, o *getOptions, t *target, headers []string, mins []int) *printers.Table {
	if !o.watch {
		mins = nil
	}
	if t.allNamespaces {
		headers = append([]string{"NAMESPACE"}, headers...)
		mins = append([]int{0}, mins...)
	}
	return &printers.Table{W: out, Headers: headers, MinWidths: mins, Event: o.watchEvents,
		Color: e.useColor(), NoHeader: o.noHeaders, Slack: watchSlack(o)}
}

// watchSlack widens data-sized columns of a watched table a little: new
// objects often have slightly longer names than the first ones.
func watchSlack(o *getOptions) int {
	if o.watch {
		return 2
	}
	return 0
}

// withNamespace puts the namespace before a row when -A shows it.
func withNamespace(t *target, ns string, row []string) []string {
	if !t.allNamespaces {
		return row
	}
	return append([]string{ns}, row...)
}

// podTable is the pod table: kubectl's columns, -o wide's extra ones.
func podTable(out io.Writer, e *env, o *getOptions, t *target) sink[*printers.Pod] {
	wide := o.output == "wide"
	headers, mins := printers.PodColumns, podMinWidths
	if wide {
		headers = append(slices.Clone(headers), printers.PodWideColumns...)
		mins = append(slices.Clone(mins), wideMinWidths...)
	}
	return &tableSink[*printers.Pod]{
		table: newTable(out, e, o, t, headers, mins),
		empty: noResources(e, o, t),
		cells: func(p *printers.Pod, now time.Time) []string {
			return withNamespace(t, p.Namespace, printers.PodRow(p, now, wide))
		},
	}
}

// metaTable is the NAME/AGE table of any other resource.
func metaTable(out io.Writer, e *env, o *getOptions, t *target) sink[*printers.Object] {
	return &tableSink[*printers.Object]{
		table: newTable(out, e, o, t, []string{"NAME", "AGE"}, nil),
		empty: noResources(e, o, t),
		cells: func(m *printers.Object, now time.Time) []string {
			return withNamespace(t, m.Namespace, []string{m.Name, printers.Age(m.CreationTimestamp, now)})
		},
	}
}

// noResources is kubectl's message for an empty list printed once; nil
// while watching, where the header shows that kwatch waits for changes.
func noResources(e *env, o *getOptions, t *target) func() {
	if o.watch {
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
