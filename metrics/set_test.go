package metrics

import (
	"fmt"
	"math"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kwatch/kwatch/metrics/metricstest"
	"github.com/stretchr/testify/require"
)

func TestWritePrometheusGolden(t *testing.T) {
	r := NewSet()
	c := r.Counter("jobs_total", "Jobs done.\nSecond line with \\ backslash.", Label{"kind", `say "hi"\now`}, Label{"app", "a\nb"})
	c.Inc()
	c.Add(2.5)
	c.Add(-7) // ignored: counters only grow
	// The same series again, labels in another order; the first help stays.
	r.Counter("jobs_total", "ignored help", Label{"app", "a\nb"}, Label{"kind", `say "hi"\now`}).Inc()
	g := r.Gauge("temperature", "Degrees.")
	g.Set(20)
	g.Dec()
	r.GaugeFunc("answer", "Computed at scrape.", func() float64 { return 42 }, Label{"q", "life"})
	h := r.Histogram("latency_seconds", "Latency.", []float64{0.1, 1}, Label{"name", "q1"})
	for _, v := range []float64{0.05, 0.1, 0.5, 5} {
		h.Observe(v)
	}
	r.Gauge("special", "Special values.", Label{"v", "inf"}).Set(math.Inf(1))

	var out strings.Builder
	require.NoError(t, r.WritePrometheus(&out))
	want := `# HELP answer Computed at scrape.
# TYPE answer gauge
answer{q="life"} 42
# HELP jobs_total Jobs done.\nSecond line with \\ backslash.
# TYPE jobs_total counter
jobs_total{app="a\nb",kind="say \"hi\"\\now"} 4.5
# HELP latency_seconds Latency.
# TYPE latency_seconds histogram
latency_seconds_bucket{name="q1",le="0.1"} 2
latency_seconds_bucket{name="q1",le="1"} 3
latency_seconds_bucket{name="q1",le="+Inf"} 4
latency_seconds_sum{name="q1"} 5.65
latency_seconds_count{name="q1"} 4
# HELP special Special values.
# TYPE special gauge
special{v="inf"} +Inf
# HELP temperature Degrees.
# TYPE temperature gauge
temperature 19
`
	if got := out.String(); got != want {
		t.Errorf("WritePrometheus wrote:\n%s\nwant:\n%s", got, want)
	}
	require.NoError(t, r.Err())
	checkExposition(t, out.String())
}

// checkExposition fails t unless text parses as the text format.
func checkExposition(t *testing.T, text string) {
	t.Helper()
	_, err := metricstest.Parse(text)
	require.NoError(t, err, "exposition:\n%s", text)
}

func FuzzEscapeLabelValue(f *testing.F) {
	for _, seed := range []string{"", "plain", `a"b`, `back\slash`, "new\nline", "\xff\xfe", `\n literal`, `"\"` + "\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		escaped := escapeLabelValue(v)
		s, err := metricstest.ParseSample(`x{a="` + escaped + `",b="end"} 1`)
		if err != nil {
			t.Fatalf("escape(%q) = %q does not unescape: %v", v, escaped, err)
		}
		if len(s.Labels) != 2 || s.Labels[1] != (metricstest.Label{Name: "b", Value: "end"}) {
			t.Fatalf("escape(%q) = %q ends early: labels %q", v, escaped, s.Labels)
		}
		if got, want := s.Labels[0].Value, strings.ToValidUTF8(v, "\uFFFD"); got != want {
			t.Fatalf("unescape(escape(%q)) = %q, want %q", v, got, want)
		}
		if !utf8.ValidString(escaped) {
			t.Fatalf("escape(%q) = %q is not valid UTF-8", v, escaped)
		}
	})
}

func TestSetReturnsSameSeries(t *testing.T) {
	var r Set // the zero value is ready
	r.Counter("c", "", Label{"a", "1"}).Inc()
	r.Counter("c", "", Label{"a", "1"}).Inc()
	r.Counter("c", "", Label{"a", "2"}).Inc()
	var out strings.Builder
	require.NoError(t, r.WritePrometheus(&out))
	for _, want := range []string{`c{a="1"} 2`, `c{a="2"} 1`} {
		require.Contains(t, out.String(), want+"\n")
	}
}

func TestSetRecordsBadRequestsWithoutPanicking(t *testing.T) {
	tests := []struct {
		name    string
		do      func(r *Set)
		wantErr string
	}{
		{"empty name", func(r *Set) { r.Counter("", "").Inc() }, "empty metric name"},
		{"bad name", func(r *Set) { r.Gauge("bad-name", "").Set(1) }, `invalid character '-' at offset 3`},
		{"name starts with digit", func(r *Set) { r.Counter("1x", "").Inc() }, "offset 0"},
		{"bad label", func(r *Set) { r.Counter("c", "", Label{"a.b", "x"}).Inc() }, `label name "a.b"`},
		{"reserved label", func(r *Set) { r.Counter("c", "", Label{"__x", "x"}).Inc() }, "reserved"},
		{"label twice", func(r *Set) { r.Counter("c", "", Label{"a", "1"}, Label{"a", "2"}).Inc() }, "given twice"},
		{"le on histogram", func(r *Set) { r.Histogram("h", "", nil, Label{"le", "1"}).Observe(1) }, `"le" is reserved`},
		{"unsorted buckets", func(r *Set) { r.Histogram("h", "", []float64{1, 0.5}).Observe(1) }, "not above bucket 0"},
		{"infinite bucket", func(r *Set) { r.Histogram("h", "", []float64{math.Inf(1)}).Observe(1) }, "must be finite"},
		{"type clash", func(r *Set) { r.Counter("m", "").Inc(); r.Gauge("m", "").Set(1) }, "requested as a gauge, already registered as a counter"},
		{"gauge over gauge func", func(r *Set) {
			r.GaugeFunc("g", "", func() float64 { return 1 })
			r.Gauge("g", "").Set(2)
		}, "already registered as a gauge func"},
		{"nil func", func(r *Set) { r.GaugeFunc("g", "", nil) }, "nil gauge func"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewSet()
			tt.do(r)
			err := r.Err()
			require.Error(t, err)
			require.ErrorContains(t, err, tt.wantErr)
			var out strings.Builder
			require.NoError(t, r.WritePrometheus(&out))
			checkExposition(t, out.String())
		})
	}
}

func TestSetIsBounded(t *testing.T) {
	r := NewSet()
	for i := range DefaultMaxSeries + 50 {
		r.Counter("c", "", Label{"i", strconv.Itoa(i)}).Inc()
	}
	err := r.Err()
	require.ErrorContains(t, err, "the set is full")
	require.ErrorContains(t, err, fmt.Sprintf("and %d more", 50-maxRecordedErrors))
	var out strings.Builder
	require.NoError(t, r.WritePrometheus(&out))
	if got := strings.Count(out.String(), "\nc{"); got != DefaultMaxSeries {
		t.Errorf("exported %d series, want %d", got, DefaultMaxSeries)
	}
}

func TestSetServesHTTP(t *testing.T) {
	r := NewSet()
	r.Gauge("up", "Is it up.").Set(1)
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, 200, rec.Code)
	if got := rec.Header().Get("Content-Type"); got != ContentType {
		t.Errorf("Content-Type = %q, want %q", got, ContentType)
	}
	if got, want := rec.Body.String(), "# HELP up Is it up.\n# TYPE up gauge\nup 1\n"; got != want {
		t.Errorf("body = %q, want %q", got, want)
	}
}

func TestFormatFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{1.5, "1.5"},
		{-2, "-2"},
		{1e21, "1e+21"},
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
		{math.NaN(), "NaN"},
	}
	for _, tt := range tests {
		if got := formatFloat(tt.in); got != tt.want {
			t.Errorf("formatFloat(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCounterFunc(t *testing.T) {
	r := NewSet()
	n := 3.0
	CounterFunc(r, "events_total", "Events.", func() float64 { return n }, Label{"name", "a"})
	r.Counter("events_total", "", Label{"name", "a"}).Inc() // refused: the series is a func
	require.ErrorContains(t, r.Err(), "already registered as a counter func")
	var out strings.Builder
	require.NoError(t, r.WritePrometheus(&out))
	want := "# HELP events_total Events.\n# TYPE events_total counter\nevents_total{name=\"a\"} 3\n"
	if got := out.String(); got != want {
		t.Errorf("WritePrometheus = %q, want %q", got, want)
	}
}

func TestCounterFuncFallsBackToGaugeFunc(t *testing.T) {
	r := NewSet()
	var p Provider = struct {
		Provider
	}{r} // hides CounterFunc
	_, isCF := p.(CounterFuncProvider)
	require.False(t, isCF)
	CounterFunc(p, "events_total", "Events.", func() float64 { return 5 })
	var out strings.Builder
	require.NoError(t, r.WritePrometheus(&out))
	require.Contains(t, out.String(), "# TYPE events_total gauge\nevents_total 5\n")
}

func TestOrNoop(t *testing.T) {
	r := NewSet()
	tests := []struct {
		in     Provider
		wantOn bool
	}{
		{nil, false},
		{Noop{}, false},
		{&Noop{}, false},
		{r, true},
	}
	for _, tt := range tests {
		p, on := OrNoop(tt.in)
		if on != tt.wantOn || p == nil {
			t.Errorf("OrNoop(%T) = %T, %v; want on=%v", tt.in, p, on, tt.wantOn)
		}
	}
}
