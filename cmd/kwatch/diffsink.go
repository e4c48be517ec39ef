package main

import (
	"io"
	"strings"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/diff"
	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
)

// diffIndent starts each line of a change's fields, under its row.
const diffIndent = "    "

// relistNote ends the lines of a change the informer computed after a
// relist: it spans every change made while kwatch was not watching.
const relistNote = " (computed after a relist)"

// diffSink is --diff for the line outputs (tables, -o name, templates):
// after each MODIFIED change its sink printed, one line per field that
// changed since the version printed before it for that object
// ("    spec.replicas: 3 → 5"), painted on a terminal. The previous version
// is the informer's old object, which for an Ordered handler is the one
// last printed, also across a relist. ADDED and DELETED print as without
// --diff.
type diffSink[T any] struct {
	sink[T]
	out   io.Writer
	opts  diff.Options
	style diff.Style
}

func newDiffSink[T any](s sink[T], out io.Writer, e *env, o *getOptions) *diffSink[T] {
	d := &diffSink[T]{sink: s, out: out, opts: diff.Options{Noise: o.diffNoise}}
	if e.useColor() {
		d.style = diff.ANSI
	}
	return d
}

func (d *diffSink[T]) write(batch []change[T]) error {
	if err := d.sink.write(batch); err != nil {
		return err
	}
	var b strings.Builder
	for _, c := range batch {
		if c.typ != "MODIFIED" || !c.hasOld {
			continue
		}
		changes, err := changesOf(c, d.opts)
		if err != nil {
			b.WriteString(diffIndent + "(cannot compare the versions: " + oneLine(err.Error()) + ")\n")
			continue
		}
		writeChanges(&b, changes, c.relisted, d.style)
	}
	if b.Len() == 0 {
		return nil
	}
	_, err := io.WriteString(d.out, b.String())
	return err
}

// writeChanges writes one line per change, or one saying that only noise
// changed.
func writeChanges(b *strings.Builder, changes []diff.Change, relisted bool, st diff.Style) {
	note := ""
	if relisted {
		note = paintNote(st, relistNote)
	}
	if len(changes) == 0 {
		b.WriteString(diffIndent + paintNote(st, "(no field changed but metadata.resourceVersion, generation or managedFields)") + note + "\n")
		return
	}
	for _, ch := range changes {
		b.WriteString(diffIndent + ch.Format(st) + note + "\n")
	}
}

func paintNote(st diff.Style, s string) string {
	if st.Note == nil {
		return s
	}
	return st.Note(s)
}

// changesOf compares a change's object with the version before it.
func changesOf[T any](c change[T], o diff.Options) ([]diff.Change, error) {
	old, new, err := versions(c)
	if err != nil {
		return nil, err
	}
	return diff.Compare(old, new, o), nil
}

// versions decodes a MODIFIED change's two versions.
func versions[T any](c change[T]) (old, new map[string]any, err error) {
	if old, err = diff.Decode(objectJSON(c.old)); err != nil {
		return nil, nil, err
	}
	if new, err = diff.Decode(objectJSON(c.obj)); err != nil {
		return nil, nil, err
	}
	return old, new, nil
}

// objectJSON is the whole object a printed value carries: a Raw's JSON, a
// server row's object (asked for with --diff).
func objectJSON(v any) []byte {
	switch v := v.(type) {
	case *printers.Raw:
		return v.JSON
	case *printers.ServerRow:
		return v.Object
	}
	return nil
}
