package printers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFormatCell(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`"web"`, "web"},
		{`null`, ""},
		{`3`, "3"},
		{`-12`, "-12"},
		{`1.5`, "1.5"},
		{`2.0`, "2"},
		{`1e21`, "1e+21"},
		{`true`, "true"},
		{`["a",1]`, "[a 1]"},
		{`{"b":2,"a":"x"}`, "map[a:x b:2]"},
		{`"two\nlines"`, "two..."},
		{`"cr\rhere"`, "cr..."},
		{`"esc\u001b[31mred"`, "esc^[[31mred"},
		{`"<none>"`, "<none>"},
	}
	for _, tt := range tests {
		got, err := FormatCell(json.RawMessage(tt.raw))
		got = DisplayCell(got)
		require.NoError(t, err, tt.raw)
		require.Equal(t, tt.want, got, "DisplayCell(FormatCell(%s)): got %q, want %q", tt.raw, got, tt.want)
	}
	_, err := FormatCell(json.RawMessage(`"unterminated`))
	require.Error(t, err)
}

func captureDir() string {
	return filepath.Join("..", "..", "..", "..", "internal", "testdata", "real-apiserver")
}

// TestServerRowRealWatch decodes the real server's Table watch: the first
// event's row carries the columns, later ones none, and the BOOKMARK's row
// has the resourceVersion in its object's metadata.
func TestServerRowRealWatch(t *testing.T) {
	f, err := os.Open(filepath.Join(captureDir(), "watch-deployments-as-table.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var rows []*ServerRow
	var types []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
		var r ServerRow
		require.NoError(t, fastJSON.Unmarshal(ev.Object, &r))
		rows, types = append(rows, &r), append(types, ev.Type)
	}
	require.Equal(t, []string{"MODIFIED", "MODIFIED", "BOOKMARK"}, types)
	first := rows[0]
	require.Equal(t, "web", first.Name)
	require.Equal(t, "demo", first.Namespace)
	require.Equal(t, "233", first.ResourceVersion)
	require.Equal(t, []string{"web", "0/3", "0", "0", "20s", "web,sidecar", "nginx:1.27,busybox:1.36", "app=web"}, first.Cells)
	shown := Visible(first.Columns, false)
	require.Equal(t, []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}, Headers(first.Columns, shown))
	require.Equal(t, []string{"web", "0/3", "0", "0", "20s"}, Pick(first.Cells, shown))
	require.Equal(t, []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"},
		Headers(first.Columns, Visible(first.Columns, true)))
	require.Nil(t, rows[1].Columns, "later events carry no columns")
	require.Equal(t, "234", rows[2].ResourceVersion, "the bookmark's RV")
	require.Equal(t, []string{"", "0/0", "0", "0", "<unknown>", "", "", ""}, rows[2].Cells)
}

func TestServerRowFallbackAndErrors(t *testing.T) {
	var r ServerRow
	require.NoError(t, fastJSON.Unmarshal([]byte(`{"kind":"Widget","metadata":{"name":"w","namespace":"n",
		"resourceVersion":"9","creationTimestamp":"2026-11-30T11:58:00Z"}}`), &r))
	require.True(t, r.Fallback, "a server without Tables sends the object")
	require.Equal(t, []string{"w", "2m"}, r.FallbackCells(now))
	require.Equal(t, "9", r.ResourceVersion)

	err := r.UnmarshalJSON([]byte(`{"kind":"Table","rows":[]}`))
	require.ErrorIs(t, err, errRowCount)
	err = r.UnmarshalJSON([]byte(`{"kind":"Table","rows":[{"cells":[1],"object":{}},{"cells":[2],"object":{}}]}`))
	require.ErrorIs(t, err, errRowCount)
	require.Equal(t, []string{"b", ""}, Pick([]string{"a", "b"}, []int{1, 5}), "a missing cell prints empty")
}

// BenchmarkServerRowDecode decodes the real server's Table watch events of
// a deployment: the first carries the column definitions, later ones not.
func BenchmarkServerRowDecode(b *testing.B) {
	body, err := os.ReadFile(filepath.Join(captureDir(), "watch-deployments-as-table.jsonl"))
	require.NoError(b, err)
	lines := bytes.Split(body, []byte("\n"))
	for i, name := range []string{"with-columns", "without"} {
		var ev struct {
			Object json.RawMessage `json:"object"`
		}
		require.NoError(b, json.Unmarshal(lines[i], &ev))
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(ev.Object)))
			b.ReportAllocs()
			for b.Loop() {
				var r ServerRow
				if err := fastJSON.Unmarshal(ev.Object, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestAge(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{5 * time.Second, "5s"},
		{119 * time.Second, "119s"},
		{3*time.Minute + 2*time.Second, "3m2s"},
		{5 * time.Minute, "5m"},
		{42 * time.Minute, "42m"},
		{4 * time.Hour, "4h"},
		{4*time.Hour + 10*time.Minute, "4h10m"},
		{20 * time.Hour, "20h"},
		{50 * time.Hour, "2d2h"},
		{48 * time.Hour, "2d"},
		{30 * 24 * time.Hour, "30d"},
		{-time.Second / 2, "0s"},
	}
	for _, tt := range tests {
		got := Age(now.Add(-tt.d), now)
		require.Equal(t, tt.want, got, "Age(now-%s): got %q, want %q", tt.d, got, tt.want)
	}
	require.Equal(t, "<unknown>", Age(time.Time{}, now), "zero time")
}

// FuzzServerRow feeds the row decoder what a hostile server might send in
// place of a one-row Table: it never panics, and a row it accepts has one
// formatted cell per cell sent, none with a line break.
func FuzzServerRow(f *testing.F) {
	for _, name := range []string{"table-deployments.json", "table-widgets-crd.json", "table-services.json"} {
		body, err := os.ReadFile(filepath.Join(captureDir(), name))
		require.NoError(f, err)
		var tb struct {
			Rows []json.RawMessage `json:"rows"`
		}
		require.NoError(f, json.Unmarshal(body, &tb))
		f.Add([]byte(`{"kind":"Table","columnDefinitions":[],"rows":[` + string(tb.Rows[0]) + `]}`))
	}
	f.Add([]byte(`{"kind":"Table","rows":[{"cells":[null,1.5e300,"a\nb",true,{"x":[1]}],"object":{"metadata":{"name":"n"}}}]}`))
	f.Add([]byte(`{"kind":"Pod","metadata":{"name":"p","creationTimestamp":"2026-11-30T11:00:00Z"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r ServerRow
		if err := r.UnmarshalJSON(data); err != nil {
			return
		}
		if r.Fallback {
			require.Len(t, r.FallbackCells(now), 2)
			return
		}
		for i, c := range r.Cells {
			require.NotContains(t, DisplayCell(c), "\n", "cell %d as shown", i)
			require.NotContains(t, c, "\x1b", "cell %d", i)
		}
	})
}

func TestCellWidthCountsTheWholeCell(t *testing.T) {
	c, err := FormatCell(json.RawMessage(`"a very long color\nwith a second line"`))
	require.NoError(t, err)
	require.Equal(t, "a very long color...", DisplayCell(c))
	require.Equal(t, 36, CellWidth(c), "kubectl sizes the column by the whole text")
}
