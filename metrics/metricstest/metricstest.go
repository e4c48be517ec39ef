// Package metricstest reads the Prometheus text exposition format back, for
// tests of code that records metrics through a metrics.Set.
//
// It is written independently of package metrics (it imports nothing of
// kwatch), so a test checks the registry's output against a second reading
// of the format rather than against the registry's own code:
//   - Parse checks the structure: every family has # HELP then # TYPE
//     before its samples, sample names belong to their family (_bucket,
//     _sum and _count for histograms), names and label names are valid,
//     label values unescape, values parse, buckets are cumulative and end
//     with le="+Inf" equal to _count.
//   - Samples and Scrape turn the text into a map from `name{labels}` (as
//     written) to value, failing the test on any structural error.
package metricstest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Sample is one sample line.
type Sample struct {
	// Name is the sample's name, suffix included (x_bucket, x_sum).
	Name string
	// Labels are the label pairs in the order written, values unescaped.
	Labels []Label
	Value  float64
	// Key is the line without its value: name{labels} as written.
	Key string
}

// Label is one label pair of a Sample.
type Label struct{ Name, Value string }

// Get returns the value of the label name.
func (s Sample) Get(name string) (string, bool) {
	for _, l := range s.Labels {
		if l.Name == name {
			return l.Value, true
		}
	}
	return "", false
}

var (
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelName  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// Parse reads text in the Prometheus text exposition format and returns
// its samples, or the first structural error, naming the line.
func Parse(text string) ([]Sample, error) {
	var out []Sample
	var family, kind string
	var lastBucket float64
	infCount := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for line := 1; sc.Scan(); line++ {
		l := sc.Text()
		if rest, ok := strings.CutPrefix(l, "# HELP "); ok {
			family, _, _ = strings.Cut(rest, " ")
			if !metricName.MatchString(family) {
				return nil, fmt.Errorf("line %d: invalid metric name %q", line, family)
			}
			kind = ""
			continue
		}
		if rest, ok := strings.CutPrefix(l, "# TYPE "); ok {
			name, k, _ := strings.Cut(rest, " ")
			if name != family {
				return nil, fmt.Errorf("line %d: TYPE of %s does not follow its HELP (%s)", line, name, family)
			}
			switch k {
			case "counter", "gauge", "histogram":
			default:
				return nil, fmt.Errorf("line %d: unknown type %q", line, k)
			}
			kind, lastBucket = k, 0
			continue
		}
		s, err := ParseSample(l)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if kind == "" {
			return nil, fmt.Errorf("line %d: sample %s before any TYPE line", line, s.Name)
		}
		if err := checkFamily(s, family, kind, &lastBucket, infCount); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// checkFamily checks that s belongs to family and, for histograms, that
// its buckets are cumulative and its count equals the +Inf bucket.
func checkFamily(s Sample, family, kind string, lastBucket *float64, infCount map[string]float64) error {
	suffix, ok := strings.CutPrefix(s.Name, family)
	if !ok {
		return fmt.Errorf("sample %s outside family %s", s.Name, family)
	}
	if kind != "histogram" {
		if suffix != "" {
			return fmt.Errorf("sample %s outside family %s", s.Name, family)
		}
		return nil
	}
	var rest []string
	for _, l := range s.Labels {
		if l.Name != "le" {
			rest = append(rest, l.Name+"="+l.Value)
		}
	}
	series := strings.Join(rest, ",")
	switch suffix {
	case "_bucket":
		le, ok := s.Get("le")
		if !ok {
			return errors.New("bucket without le")
		}
		if s.Value < *lastBucket {
			return fmt.Errorf("bucket le=%s (%v) below the one before (%v): not cumulative", le, s.Value, *lastBucket)
		}
		*lastBucket = s.Value
		if le == "+Inf" {
			infCount[series] = s.Value
		}
	case "_sum":
	case "_count":
		if want, ok := infCount[series]; !ok || want != s.Value {
			return fmt.Errorf("_count %v differs from the +Inf bucket %v", s.Value, want)
		}
		*lastBucket = 0
	default:
		return fmt.Errorf("unexpected histogram sample %s", s.Name)
	}
	return nil
}

// ParseSample splits one sample line, `name{a="x",b="y"} value`,
// unescaping label values.
func ParseSample(l string) (Sample, error) {
	i := strings.IndexAny(l, "{ ")
	if i < 0 {
		return Sample{}, errors.New("no value")
	}
	s := Sample{Name: l[:i]}
	if !metricName.MatchString(s.Name) {
		return Sample{}, fmt.Errorf("invalid sample name %q", s.Name)
	}
	rest := l[i:]
	if strings.HasPrefix(rest, "{") {
		rest = rest[1:]
		for !strings.HasPrefix(rest, "}") {
			eq := strings.Index(rest, `="`)
			if eq < 0 {
				return Sample{}, fmt.Errorf("label without =\": %q", rest)
			}
			name := rest[:eq]
			if !labelName.MatchString(name) {
				return Sample{}, fmt.Errorf("invalid label name %q", name)
			}
			v, n, err := unescape(rest[eq+2:])
			if err != nil {
				return Sample{}, fmt.Errorf("label %s: %w", name, err)
			}
			s.Labels = append(s.Labels, Label{name, v})
			rest = strings.TrimPrefix(rest[eq+2+n:], ",")
		}
		rest = rest[1:]
	}
	s.Key = strings.TrimSuffix(l, rest)
	v, ok := strings.CutPrefix(rest, " ")
	if !ok {
		return Sample{}, errors.New("no space before the value")
	}
	var err error
	if s.Value, err = strconv.ParseFloat(v, 64); err != nil {
		return Sample{}, fmt.Errorf("value: %w", err)
	}
	return s, nil
}

// unescape reads an escaped label value up to its closing quote and
// returns it and the bytes consumed, quote included.
func unescape(s string) (string, int, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\n':
			return "", 0, errors.New("raw newline in label value")
		case '\\':
			i++
			if i == len(s) {
				return "", 0, errors.New("dangling backslash")
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
	return "", 0, errors.New("unterminated label value")
}

// Samples parses text and returns its samples by key (`name{labels}` as
// written), failing tb on a structural error.
func Samples(tb testing.TB, text string) map[string]float64 {
	tb.Helper()
	samples, err := Parse(text)
	if err != nil {
		tb.Fatalf("metrics text does not parse: %v\n%s", err, text)
	}
	m := make(map[string]float64, len(samples))
	for _, s := range samples {
		m[s.Key] = s.Value
	}
	return m
}

// Writer is what Scrape reads: *metrics.Set.
type Writer interface {
	WritePrometheus(w io.Writer) error
}

// Scrape writes w's exposition and returns Samples of it.
func Scrape(tb testing.TB, w Writer) map[string]float64 {
	tb.Helper()
	var b strings.Builder
	if err := w.WritePrometheus(&b); err != nil {
		tb.Fatalf("WritePrometheus: %v", err)
	}
	return Samples(tb, b.String())
}
