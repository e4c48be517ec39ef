package queue

import (
	"bufio"
	"fmt"
	"math"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestWritePrometheusGolden(t *testing.T) {
	r := NewRegistry()
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

// checkExposition parses text as the Prometheus text format: every family
// has HELP then TYPE before its samples, sample names belong to the
// declared family (with _bucket/_sum/_count for histograms), label values
// unescape cleanly, values parse, and histogram buckets are cumulative and
// end with le="+Inf" equal to _count.
func checkExposition(t *testing.T, text string) {
	t.Helper()
	var family, kind string
	var lastBucket float64
	var infCount = map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for line := 1; sc.Scan(); line++ {
		l := sc.Text()
		if rest, ok := strings.CutPrefix(l, "# HELP "); ok {
			family, _, _ = strings.Cut(rest, " ")
			require.NoError(t, checkMetricName(family), "line %d", line)
			continue
		}
		if rest, ok := strings.CutPrefix(l, "# TYPE "); ok {
			name, k, _ := strings.Cut(rest, " ")
			require.Equal(t, family, name, "line %d: TYPE does not follow its HELP", line)
			require.Contains(t, []string{"counter", "gauge", "histogram"}, k, "line %d", line)
			kind, lastBucket = k, 0
			continue
		}
		name, labels, value, err := parseSample(l)
		require.NoError(t, err, "line %d: %q", line, l)
		suffix := strings.TrimPrefix(name, family)
		require.True(t, strings.HasPrefix(name, family), "line %d: sample %s outside family %s", line, name, family)
		if kind != "histogram" {
			require.Empty(t, suffix, "line %d", line)
			continue
		}
		series := strings.Join(withoutLabel(labels, "le"), ",")
		switch suffix {
		case "_bucket":
			le, ok := labelValue(labels, "le")
			require.True(t, ok, "line %d: bucket without le", line)
			require.GreaterOrEqual(t, value, lastBucket, "line %d: buckets not cumulative", line)
			lastBucket = value
			if le == "+Inf" {
				infCount[series] = value
			}
		case "_sum":
		case "_count":
			require.Equal(t, infCount[series], value, "line %d: _count differs from the +Inf bucket", line)
			lastBucket = 0
		default:
			t.Fatalf("line %d: unexpected histogram sample %s", line, name)
		}
	}
}

// parseSample splits `name{a="x",b="y"} value`, unescaping label values.
func parseSample(l string) (name string, labels []string, value float64, err error) {
	i := strings.IndexAny(l, "{ ")
	if i < 0 {
		return "", nil, 0, fmt.Errorf("no value")
	}
	name, rest := l[:i], l[i:]
	if strings.HasPrefix(rest, "{") {
		rest = rest[1:]
		for !strings.HasPrefix(rest, "}") {
			eq := strings.Index(rest, `="`)
			if eq < 0 {
				return "", nil, 0, fmt.Errorf("label without =\": %q", rest)
			}
			lname := rest[:eq]
			if err := checkLabelName(lname); err != nil && lname != "le" {
				return "", nil, 0, err
			}
			v, n, err := unescapeLabelValue(rest[eq+2:])
			if err != nil {
				return "", nil, 0, err
			}
			labels = append(labels, lname+"="+v)
			rest = strings.TrimPrefix(rest[eq+2+n:], ",")
		}
		rest = rest[1:]
	}
	v, ok := strings.CutPrefix(rest, " ")
	if !ok {
		return "", nil, 0, fmt.Errorf("no space before the value")
	}
	value, err = strconv.ParseFloat(v, 64)
	return name, labels, value, err
}

// unescapeLabelValue reads an escaped value up to its closing quote and
// returns it and the bytes consumed, quote included.
func unescapeLabelValue(s string) (string, int, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\n':
			return "", 0, fmt.Errorf("raw newline in label value")
		case '\\':
			i++
			if i == len(s) {
				return "", 0, fmt.Errorf("dangling backslash")
			}
			switch s[i] {
			case '\\':
				b.WriteByte('\\')
			case '"':
				b.WriteByte('"')
			case 'n':
				b.WriteByte('\n')
			default:
				return "", 0, fmt.Errorf("unknown escape \\%c", s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated label value")
}

func labelValue(labels []string, name string) (string, bool) {
	for _, l := range labels {
		if v, ok := strings.CutPrefix(l, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func withoutLabel(labels []string, name string) []string {
	var out []string
	for _, l := range labels {
		if !strings.HasPrefix(l, name+"=") {
			out = append(out, l)
		}
	}
	return out
}

func FuzzEscapeLabelValue(f *testing.F) {
	for _, seed := range []string{"", "plain", `a"b`, `back\slash`, "new\nline", "\xff\xfe", `\n literal`, `"\"` + "\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		escaped := escapeLabelValue(v)
		got, n, err := unescapeLabelValue(escaped + `"`)
		if err != nil {
			t.Fatalf("escape(%q) = %q does not unescape: %v", v, escaped, err)
		}
		if n != len(escaped)+1 {
			t.Fatalf("escape(%q) = %q ends early at byte %d", v, escaped, n)
		}
		if want := strings.ToValidUTF8(v, "\uFFFD"); got != want {
			t.Fatalf("unescape(escape(%q)) = %q, want %q", v, got, want)
		}
		if !utf8.ValidString(escaped) {
			t.Fatalf("escape(%q) = %q is not valid UTF-8", v, escaped)
		}
	})
}

func TestRegistryReturnsSameSeries(t *testing.T) {
	var r Registry // the zero value is ready
	r.Counter("c", "", Label{"a", "1"}).Inc()
	r.Counter("c", "", Label{"a", "1"}).Inc()
	r.Counter("c", "", Label{"a", "2"}).Inc()
	var out strings.Builder
	require.NoError(t, r.WritePrometheus(&out))
	for _, want := range []string{`c{a="1"} 2`, `c{a="2"} 1`} {
		require.Contains(t, out.String(), want+"\n")
	}
}

func TestRegistryRecordsBadRequestsWithoutPanicking(t *testing.T) {
	tests := []struct {
		name    string
		do      func(r *Registry)
		wantErr string
	}{
		{"empty name", func(r *Registry) { r.Counter("", "").Inc() }, "empty metric name"},
		{"bad name", func(r *Registry) { r.Gauge("bad-name", "").Set(1) }, `invalid character '-' at offset 3`},
		{"name starts with digit", func(r *Registry) { r.Counter("1x", "").Inc() }, "offset 0"},
		{"bad label", func(r *Registry) { r.Counter("c", "", Label{"a.b", "x"}).Inc() }, `label name "a.b"`},
		{"reserved label", func(r *Registry) { r.Counter("c", "", Label{"__x", "x"}).Inc() }, "reserved"},
		{"label twice", func(r *Registry) { r.Counter("c", "", Label{"a", "1"}, Label{"a", "2"}).Inc() }, "given twice"},
		{"le on histogram", func(r *Registry) { r.Histogram("h", "", nil, Label{"le", "1"}).Observe(1) }, `"le" is reserved`},
		{"unsorted buckets", func(r *Registry) { r.Histogram("h", "", []float64{1, 0.5}).Observe(1) }, "not above bucket 0"},
		{"infinite bucket", func(r *Registry) { r.Histogram("h", "", []float64{math.Inf(1)}).Observe(1) }, "must be finite"},
		{"type clash", func(r *Registry) { r.Counter("m", "").Inc(); r.Gauge("m", "").Set(1) }, "requested as a gauge, already registered as a counter"},
		{"gauge over gauge func", func(r *Registry) {
			r.GaugeFunc("g", "", func() float64 { return 1 })
			r.Gauge("g", "").Set(2)
		}, "already registered as a gauge func"},
		{"nil func", func(r *Registry) { r.GaugeFunc("g", "", nil) }, "nil gauge func"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry()
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

func TestRegistryIsBounded(t *testing.T) {
	r := NewRegistry()
	for i := range DefaultMaxSeries + 50 {
		r.Counter("c", "", Label{"i", strconv.Itoa(i)}).Inc()
	}
	err := r.Err()
	require.ErrorContains(t, err, "registry is full")
	require.ErrorContains(t, err, fmt.Sprintf("and %d more", 50-maxRecordedErrors))
	var out strings.Builder
	require.NoError(t, r.WritePrometheus(&out))
	if got := strings.Count(out.String(), "\nc{"); got != DefaultMaxSeries {
		t.Errorf("exported %d series, want %d", got, DefaultMaxSeries)
	}
}

func TestRegistryServesHTTP(t *testing.T) {
	r := NewRegistry()
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
