package main

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

func srvRow(name string, cols []printers.Column, cells ...string) change[*printers.ServerRow] {
	return change[*printers.ServerRow]{typ: watch.Added,
		obj: &printers.ServerRow{Meta: printers.Meta{Name: name, Namespace: "ns"}, Cells: cells, Columns: cols}}
}

// TestServerTable lays out the server's rows as kubectl does: the columns
// come from whichever row of the initial list carries them, priority-1
// ones only with -o wide, a new header when the server's columns change,
// NAME and AGE for a server that sent objects instead of a Table.
func TestServerTable(t *testing.T) {
	cols := []printers.Column{{Name: "Name", Format: "name"}, {Name: "Ready"}, {Name: "Nodes", Priority: 1}}
	other := []printers.Column{{Name: "Name", Format: "name"}, {Name: "Size", Type: "integer"}}
	tests := []struct {
		name    string
		wide    bool
		batches [][]change[*printers.ServerRow]
		want    string
	}{
		{"columns from a later row of the first batch", false, [][]change[*printers.ServerRow]{{
			srvRow("a", nil, "a", "1/1", "n1"), srvRow("bb", cols, "bb", "0/1", "n2"),
		}}, "NAME   READY\na      1/1\nbb     0/1\n"},
		{"wide shows priority 1", true, [][]change[*printers.ServerRow]{{
			srvRow("a", cols, "a", "1/1", "n1"),
		}}, "NAME   READY   NODES\na      1/1     n1\n"},
		{"a missing cell prints empty", true, [][]change[*printers.ServerRow]{{
			srvRow("a", cols, "a", "1/1"),
		}}, "NAME   READY   NODES\na      1/1     \n"},
		{"new columns, new header", false, [][]change[*printers.ServerRow]{
			{srvRow("a", cols, "a", "1/1", "n1")},
			{srvRow("a", cols, "a", "1/1", "n1"), srvRow("w", other, "w", "3")},
		}, "NAME   READY\na      1/1\na      1/1\nNAME   SIZE\nw      3\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			o := &getOptions{}
			if tt.wide {
				o.output = "wide"
			}
			s := newServerTable(context.Background(), &out, &env{}, o, &target{res: kube.Resource{Resource: "things"}})
			for _, b := range tt.batches {
				require.NoError(t, s.write(b))
			}
			require.Equal(t, tt.want, out.String())
		})
	}
}

func TestServerTableFallbackAndEmpty(t *testing.T) {
	var out, errb bytes.Buffer
	s := newServerTable(context.Background(), &out, &env{stderr: &errb}, &getOptions{}, &target{res: kube.Resource{Resource: "things"}, namespace: "demo"})
	require.NoError(t, s.write(nil))
	require.Equal(t, "No resources found in demo namespace.\n", errb.String(), "an empty list printed once")
	require.Empty(t, out.String())

	out.Reset()
	s = newServerTable(context.Background(), &out, &env{}, &getOptions{}, &target{res: kube.Resource{Resource: "things"}})
	r := &printers.ServerRow{Meta: printers.Meta{Name: "x", CreationTimestamp: time.Now().Add(-90 * time.Second)}, Fallback: true}
	require.NoError(t, s.write([]change[*printers.ServerRow]{{typ: watch.Added, obj: r}}))
	require.Regexp(t, `^NAME   AGE\nx      (90|91)s\n$`, out.String(), "a server without Tables: NAME and AGE")
}

// TestServerTableAsksForColumns: a table whose first row came without the
// server's columns (a watch that started with no object) asks the server
// for them and prints its header, never columns named by position unless
// the server cannot say.
func TestServerTableAsksForColumns(t *testing.T) {
	cols := []printers.Column{{Name: "Name"}, {Name: "Ready"}}
	row := &printers.ServerRow{Meta: printers.Meta{Name: "a"}, Cells: []string{"a", "1/1"}}
	for _, tt := range []struct {
		name string
		ask  func() ([]printers.Column, error)
		want string
	}{
		{"the server's columns", func() ([]printers.Column, error) { return cols, nil }, "NAME   READY\na      1/1\n"},
		{"the server cannot say", func() ([]printers.Column, error) { return nil, errors.New("down") }, "COLUMN 1   COLUMN 2\na          1/1\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			s := newServerTable(context.Background(), &out, &env{}, &getOptions{watch: true}, &target{res: kube.Resource{Resource: "things"}})
			s.columns = tt.ask
			require.NoError(t, s.write(nil))
			require.NoError(t, s.write([]change[*printers.ServerRow]{{typ: watch.Added, obj: row}}))
			require.Equal(t, tt.want, out.String())
		})
	}
}
