package printers

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTable(t *testing.T) {
	tests := []struct {
		name    string
		table   Table
		batches [][]Row
		want    string
	}{
		{
			name:  "kubectl layout",
			table: Table{Headers: []string{"NAME", "READY", "AGE"}},
			batches: [][]Row{{
				{Cells: []string{"web-1", "1/1", "5s"}},
				{Cells: []string{"a-much-longer-name", "0/1", "3m2s"}},
			}},
			want: "NAME                 READY   AGE\n" +
				"web-1                1/1     5s\n" +
				"a-much-longer-name   0/1     3m2s\n",
		},
		{
			name:  "event column, minimum widths, growth after the first batch",
			table: Table{Headers: []string{"NAME", "STATUS", "AGE"}, MinWidths: []int{0, 10}, Event: true},
			batches: [][]Row{
				{{Event: "ADDED", Cells: []string{"web-1", "Running", "5s"}}},
				{{Event: "MODIFIED", Cells: []string{"web-1", "CrashLoopBackOff", "6s"}}},
				{{Event: "DELETED", Cells: []string{"web-1", "Terminating", "7s"}}},
			},
			want: "EVENT      NAME    STATUS       AGE\n" +
				"ADDED      web-1   Running      5s\n" +
				"MODIFIED   web-1   CrashLoopBackOff   6s\n" +
				"DELETED    web-1   Terminating        7s\n",
		},
		{
			name:    "empty first batch prints the header",
			table:   Table{Headers: []string{"NAME", "AGE"}},
			batches: [][]Row{nil},
			want:    "NAME   AGE\n",
		},
		{
			name:    "no header, slack",
			table:   Table{Headers: []string{"NAME", "AGE"}, NoHeader: true, Slack: 2},
			batches: [][]Row{{{Cells: []string{"web-1", "1s"}}}, {{Cells: []string{"web-12", "1s"}}}},
			want:    "web-1     1s\nweb-12    1s\n",
		},
		{
			name:    "colour wraps only the event word",
			table:   Table{Headers: []string{"NAME"}, Event: true, Color: true},
			batches: [][]Row{{{Event: "DELETED", Cells: []string{"x"}}}},
			want:    "EVENT      NAME\n\x1b[31mDELETED\x1b[0m    x\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			tt.table.W = &b
			for _, batch := range tt.batches {
				require.NoError(t, tt.table.Write(batch))
			}
			require.Equal(t, tt.want, b.String(), "got:\n%s\nwant:\n%s", b.String(), tt.want)
		})
	}
}

// countingWriter records each Write call.
type countingWriter struct{ writes []string }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestTableOneWritePerRow(t *testing.T) {
	w := &countingWriter{}
	tab := Table{W: w, Headers: []string{"NAME", "AGE"}}
	require.NoError(t, tab.Write([]Row{{Cells: []string{"a", "1s"}}, {Cells: []string{"b", "2s"}}}))
	require.Len(t, w.writes, 3, "header and two rows: got %q", w.writes)
	for _, s := range w.writes {
		require.True(t, strings.HasSuffix(s, "\n") && strings.Count(s, "\n") == 1, "one whole line per write: %q", s)
	}
}
