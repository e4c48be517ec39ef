package main

import (
	"slices"
	"strings"
)

// Columns the command line adds to the server's table, as kubectl adds
// them: one per -L label (headed by the key's last path segment in upper
// case, "app.kubernetes.io/name" as NAME; empty where the object lacks
// it), then LABELS with --show-labels (key=value, sorted, "<none>" for
// none). --show-kind names each object kind/name, which kubectl does by
// itself when one command prints several types.

// extraHeaders are the headers of the added columns.
func extraHeaders(o *getOptions) []string {
	var h []string
	for _, key := range o.labelColumns {
		h = append(h, strings.ToUpper(key[strings.LastIndex(key, "/")+1:]))
	}
	if o.showLabels {
		h = append(h, "LABELS")
	}
	return h
}

// extraCells are an object's cells of the added columns.
func extraCells(o *getOptions, labels map[string]string) []string {
	var c []string
	for _, key := range o.labelColumns {
		c = append(c, labels[key])
	}
	if o.showLabels {
		c = append(c, labelString(labels))
	}
	return c
}

// labelString is kubectl's LABELS cell.
func labelString(labels map[string]string) string {
	if len(labels) == 0 {
		return "<none>"
	}
	// kubectl sorts the key=value pairs, not the keys: "a.b=x" before "a=y".
	parts := make([]string, 0, len(labels))
	for k, v := range labels {
		parts = append(parts, k+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// withKind prefixes the NAME cell (the first) with the kind, for
// --show-kind: "pod/web-1".
func withKind(o *getOptions, t *target, cells []string) []string {
	if !o.showKind || len(cells) == 0 {
		return cells
	}
	out := slices.Clone(cells)
	out[0] = kindName(t.res) + "/" + out[0]
	return out
}

// keepLabels: the printer reads the objects' labels; otherwise the
// command drops them before the objects are cached.
func keepLabels(o *getOptions) bool { return o.showLabels || len(o.labelColumns) > 0 }

// labelled is an object whose decoded labels can be dropped.
type labelled interface{ ClearLabels() }
