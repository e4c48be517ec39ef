package metrics

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// ContentType is the media type of the Prometheus text exposition format
// that WritePrometheus writes.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// WritePrometheus writes every exported series in the Prometheus text
// exposition format: for each metric name, in name order, a # HELP and a
// # TYPE line, then its series in label order; histograms as cumulative
// _bucket series with an le label, then _sum and _count. It returns the
// first error from w.
func (r *Set) WritePrometheus(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, f := range r.snapshot() {
		bw.WriteString("# HELP ")
		bw.WriteString(f.name)
		bw.WriteByte(' ')
		bw.WriteString(escapeHelp(f.help))
		bw.WriteString("\n# TYPE ")
		bw.WriteString(f.name)
		bw.WriteByte(' ')
		bw.WriteString(f.kind.String())
		bw.WriteByte('\n')
		for _, s := range f.series {
			writeSeries(bw, f, s)
		}
	}
	return bw.Flush()
}

// ServeHTTP writes the set in the Prometheus text format, so a
// Set can be mounted at /metrics.
func (r *Set) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	var buf bytes.Buffer
	_ = r.WritePrometheus(&buf) // a bytes.Buffer does not fail
	w.Header().Set("Content-Type", ContentType)
	_, _ = w.Write(buf.Bytes())
}

// familySnapshot is a family and its series, sorted, taken under the lock
// so that writing (and calling gauge funcs) happens without it.
type familySnapshot struct {
	*family
	series []*series
}

func (r *Set) snapshot() []familySnapshot {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]familySnapshot, 0, len(r.families))
	for _, f := range r.families {
		if len(f.series) == 0 {
			continue // created by a request that then failed
		}
		fs := familySnapshot{family: f, series: make([]*series, 0, len(f.series))}
		for _, s := range f.series {
			fs.series = append(fs.series, s)
		}
		slices.SortFunc(fs.series, func(a, b *series) int { return strings.Compare(a.labels, b.labels) })
		out = append(out, fs)
	}
	slices.SortFunc(out, func(a, b familySnapshot) int { return strings.Compare(a.name, b.name) })
	return out
}

// writeSeries writes the sample lines of one series.
func writeSeries(bw *bufio.Writer, f familySnapshot, s *series) {
	if f.kind != kindHistogram {
		v := s.value.load()
		if fn := s.fn.Load(); fn != nil {
			v = (*fn)()
		}
		writeSample(bw, f.name, "", s.labels, "", v)
		return
	}
	cumulative, sum := s.hist.snapshot()
	for i, c := range cumulative {
		le := "+Inf"
		if i < len(f.buckets) {
			le = formatFloat(f.buckets[i])
		}
		writeSample(bw, f.name, "_bucket", s.labels, `le="`+le+`"`, float64(c))
	}
	writeSample(bw, f.name, "_sum", s.labels, "", sum)
	writeSample(bw, f.name, "_count", s.labels, "", float64(cumulative[len(cumulative)-1]))
}

// writeSample writes name+suffix{labels,extra} value.
func writeSample(bw *bufio.Writer, name, suffix, labels, extra string, v float64) {
	bw.WriteString(name)
	bw.WriteString(suffix)
	if labels != "" || extra != "" {
		bw.WriteByte('{')
		bw.WriteString(labels)
		if labels != "" && extra != "" {
			bw.WriteByte(',')
		}
		bw.WriteString(extra)
		bw.WriteByte('}')
	}
	bw.WriteByte(' ')
	bw.WriteString(formatFloat(v))
	bw.WriteByte('\n')
}

// formatFloat writes v as the exposition format expects, with +Inf, -Inf
// and NaN spelled out.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Escapers of the text format: label values escape backslash, double
// quote and line feed; HELP text escapes backslash and line feed.
var (
	labelValueEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	helpEscaper       = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

// escapeLabelValue escapes v for a label value, replacing invalid UTF-8,
// which the format does not allow, with U+FFFD.
func escapeLabelValue(v string) string {
	return labelValueEscaper.Replace(strings.ToValidUTF8(v, "\uFFFD"))
}

func escapeHelp(h string) string {
	return helpEscaper.Replace(strings.ToValidUTF8(h, "\uFFFD"))
}
