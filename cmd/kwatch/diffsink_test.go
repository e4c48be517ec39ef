package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
	"github.com/kwatch/kwatch/watch"
)

// lineSink prints a change's name, as a table prints its row.
type lineSink struct{ out *bytes.Buffer }

func (s lineSink) write(batch []change[*printers.Raw]) error {
	for _, c := range batch {
		s.out.WriteString(string(c.typ) + " " + c.obj.Name + "\n")
	}
	return nil
}

func (lineSink) close() error { return nil }

func rawObj(name, body string) *printers.Raw {
	return &printers.Raw{Meta: printers.Meta{Name: name}, JSON: []byte(body)}
}

// TestDiffSink: under each MODIFIED line, one indented line per changed
// field; a change of noise only says so; a relist's lines say it; ADDED
// and DELETED add nothing; colours only on a terminal.
func TestDiffSink(t *testing.T) {
	v1 := rawObj("web", `{"metadata":{"name":"web","resourceVersion":"1"},"spec":{"replicas":3}}`)
	v2 := rawObj("web", `{"metadata":{"name":"web","resourceVersion":"2"},"spec":{"replicas":5}}`)
	v3 := rawObj("web", `{"metadata":{"name":"web","resourceVersion":"3"},"spec":{"replicas":5}}`)
	var out bytes.Buffer
	d := newDiffSink[*printers.Raw](lineSink{&out}, &out, &env{getenv: func(string) string { return "" }}, &getOptions{})
	for _, batch := range [][]change[*printers.Raw]{
		{{typ: watch.Added, obj: v1}},
		{{typ: watch.Modified, obj: v2, old: v1, hasOld: true}},
		{{typ: watch.Modified, obj: v3, old: v2, hasOld: true}},
		{{typ: watch.Modified, obj: v1, old: v3, hasOld: true, relisted: true}},
		{{typ: watch.Deleted, obj: v1, relisted: true}},
	} {
		require.NoError(t, d.write(batch))
	}
	require.Equal(t, `ADDED web
MODIFIED web
    spec.replicas: 3 → 5
MODIFIED web
    (no field changed but metadata.resourceVersion, generation or managedFields)
MODIFIED web
    spec.replicas: 5 → 3 (computed after a relist)
DELETED web
`, out.String())

	out.Reset()
	noisy := newDiffSink[*printers.Raw](lineSink{&out}, &out, &env{outTTY: true, getenv: func(string) string { return "" }},
		&getOptions{diffNoise: true})
	require.NoError(t, noisy.write([]change[*printers.Raw]{{typ: watch.Modified, obj: v2, old: v1, hasOld: true}}))
	require.Equal(t, "MODIFIED web\n    metadata.resourceVersion: \x1b[31m\"1\"\x1b[0m → \x1b[32m\"2\"\x1b[0m\n"+
		"    spec.replicas: \x1b[31m3\x1b[0m → \x1b[32m5\x1b[0m\n", out.String(), "noise kept, coloured on a terminal")
}
