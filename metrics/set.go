package metrics

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// DefaultMaxSeries is how many series a Set holds in all. A request
// for one more gets a working series that is not exported, and an error in
// Set.Err: a label with unbounded values shows up as an error rather
// than as memory growth.
const DefaultMaxSeries = 10000

// maxRecordedErrors bounds the errors a Set remembers.
const maxRecordedErrors = 32

// Set is an in-memory Provider that writes the Prometheus text
// exposition format, without depending on a Prometheus library. Queues,
// runners, informers and a program's own series can register into one
// Set and be scraped together.
//
// Asking again for a series with the same name and labels returns the same
// series. A request that cannot be honoured (an invalid name, a name
// already used by another metric type, too many series) never panics: it
// returns a series that works but is not exported, and records why in Err.
//
// The zero value is an empty set ready to use. A Set is safe for
// concurrent use; updates to its series are lock-free atomics. Most callers
// pass it as Options.Metrics and serve it over HTTP, since it is an
// http.Handler.
type Set struct {
	mu       sync.Mutex
	families map[string]*family // by metric name
	nSeries  int                // series in all families
	errs     []error            // at most maxRecordedErrors
	dropped  int                // errors not kept in errs
}

// NewSet returns an empty set, the same as a zero Set.
func NewSet() *Set { return &Set{} }

var _ CounterFuncProvider = (*Set)(nil)

type metricKind int

const (
	kindCounter metricKind = iota
	kindGauge
	kindHistogram
)

func (k metricKind) String() string {
	return [...]string{"counter", "gauge", "histogram"}[k]
}

// family is every series of one metric name.
type family struct {
	name    string
	help    string
	kind    metricKind
	buckets []float64          // histograms only: upper bounds, ascending
	series  map[string]*series // by rendered label set
}

// series is one labelled time series. Exactly one of value, fn or hist is
// used, depending on the family kind and how the series was registered:
// fn for a GaugeFunc or a CounterFunc, hist for a histogram.
type series struct {
	labels string // rendered and sorted: a="x",b="y"
	value  atomicFloat
	fn     atomic.Pointer[func() float64] // set for a GaugeFunc
	hist   *histogram
}

// Counter returns the counter series name{labels}.
func (r *Set) Counter(name, help string, labels ...Label) Counter {
	s, ok := r.lookup(name, help, kindCounter, nil, labels)
	if !ok || s.fn.Load() != nil {
		if ok {
			r.recordf("metric %s{%s}: already registered as a counter func", name, s.labels)
		}
		return &counterSeries{s: &series{}}
	}
	return &counterSeries{s: s}
}

// CounterFunc registers the counter series name{labels} whose value is
// fn() at scrape time; registering it again replaces fn. fn must never
// decrease, must be safe to call from any goroutine and should be quick.
func (r *Set) CounterFunc(name, help string, fn func() float64, labels ...Label) {
	r.registerFunc(name, help, kindCounter, fn, labels)
}

// Gauge returns the gauge series name{labels}.
func (r *Set) Gauge(name, help string, labels ...Label) Gauge {
	s, ok := r.lookup(name, help, kindGauge, nil, labels)
	if !ok || s.fn.Load() != nil {
		if ok {
			r.recordf("metric %s{%s}: already registered as a gauge func", name, s.labels)
		}
		return &gaugeSeries{s: &series{}}
	}
	return &gaugeSeries{s: s}
}

// GaugeFunc registers the gauge series name{labels} whose value is fn()
// at scrape time; registering it again replaces fn. fn must be safe to
// call from any goroutine and should be quick.
func (r *Set) GaugeFunc(name, help string, fn func() float64, labels ...Label) {
	r.registerFunc(name, help, kindGauge, fn, labels)
}

// registerFunc sets fn as the value of the series name{labels} of kind.
// A series already updated through Counter or Gauge keeps its value and
// gets fn from now on: Set does not know which the caller meant.
func (r *Set) registerFunc(name, help string, kind metricKind, fn func() float64, labels []Label) {
	if fn == nil {
		r.recordf("metric %s: nil %s func", name, kind)
		return
	}
	if s, ok := r.lookup(name, help, kind, nil, labels); ok {
		s.fn.Store(&fn)
	}
}

// Histogram returns the histogram series name{labels} with the given
// upper bounds (ascending, finite; nil means DefaultDurationBuckets). A
// histogram name keeps the bounds it was first registered with.
func (r *Set) Histogram(name, help string, buckets []float64, labels ...Label) Histogram {
	if buckets == nil {
		buckets = DefaultDurationBuckets
	}
	if err := checkBuckets(buckets); err != nil {
		r.recordf("metric %s: %v", name, err)
		return newHistogram(nil)
	}
	s, ok := r.lookup(name, help, kindHistogram, buckets, labels)
	if !ok {
		return newHistogram(nil)
	}
	return s.hist
}

// lookup finds or creates the series name{labels} of kind. It reports
// false, having recorded why, when the request is invalid.
func (r *Set) lookup(name, help string, kind metricKind, buckets []float64, labels []Label) (*series, bool) {
	key, err := renderLabels(labels, kind == kindHistogram)
	if err == nil {
		err = checkMetricName(name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.recordLocked(fmt.Errorf("metric %q: %w", name, err))
		return nil, false
	}
	f := r.families[name]
	if f == nil {
		if r.families == nil {
			r.families = make(map[string]*family)
		}
		f = &family{name: name, help: help, kind: kind, buckets: slices.Clone(buckets), series: make(map[string]*series)}
		r.families[name] = f
	}
	if f.kind != kind {
		r.recordLocked(fmt.Errorf("metric %s: requested as a %s, already registered as a %s", name, kind, f.kind))
		return nil, false
	}
	if s := f.series[key]; s != nil {
		return s, true
	}
	if r.nSeries >= DefaultMaxSeries {
		r.recordLocked(fmt.Errorf("metric %s{%s}: the set is full (%d series)", name, key, DefaultMaxSeries))
		return nil, false
	}
	s := &series{labels: key}
	if kind == kindHistogram {
		s.hist = newHistogram(f.buckets)
	}
	f.series[key] = s
	r.nSeries++
	return s, true
}

// Err returns the problems met while registering series, joined, or nil.
func (r *Set) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	errs := slices.Clone(r.errs)
	if r.dropped > 0 {
		errs = append(errs, fmt.Errorf("and %d more metric registration errors", r.dropped))
	}
	return errors.Join(errs...)
}

func (r *Set) recordf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recordLocked(fmt.Errorf(format, args...))
}

// recordLocked remembers err, up to maxRecordedErrors. r.mu must be held.
func (r *Set) recordLocked(err error) {
	if len(r.errs) < maxRecordedErrors {
		r.errs = append(r.errs, err)
		return
	}
	r.dropped++
}

// checkMetricName accepts [a-zA-Z_:][a-zA-Z0-9_:]*.
func checkMetricName(name string) error {
	if name == "" {
		return errors.New("empty metric name")
	}
	for i, c := range name {
		if !(c == '_' || c == ':' || isASCIILetter(c) || (i > 0 && isASCIIDigit(c))) {
			return fmt.Errorf("invalid character %q at offset %d of the metric name", c, i)
		}
	}
	return nil
}

// checkLabelName accepts [a-zA-Z_][a-zA-Z0-9_]* not starting with "__",
// which Prometheus reserves.
func checkLabelName(name string) error {
	if name == "" {
		return errors.New("empty label name")
	}
	if strings.HasPrefix(name, "__") {
		return fmt.Errorf("label name %q: names starting with __ are reserved", name)
	}
	for i, c := range name {
		if !(c == '_' || isASCIILetter(c) || (i > 0 && isASCIIDigit(c))) {
			return fmt.Errorf("label name %q: invalid character %q at offset %d", name, c, i)
		}
	}
	return nil
}

func isASCIILetter(c rune) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isASCIIDigit(c rune) bool  { return c >= '0' && c <= '9' }

// renderLabels validates labels and renders them sorted by name as
// a="x",b="y", the series key and its exposition text.
func renderLabels(labels []Label, histogram bool) (string, error) {
	sorted := slices.Clone(labels)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var b strings.Builder
	for i, l := range sorted {
		if err := checkLabelName(l.Name); err != nil {
			return "", err
		}
		if i > 0 && sorted[i-1].Name == l.Name {
			return "", fmt.Errorf("label name %q given twice", l.Name)
		}
		if histogram && l.Name == "le" {
			return "", errors.New(`label name "le" is reserved for histogram buckets`)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l.Name)
		b.WriteString(`="`)
		b.WriteString(escapeLabelValue(l.Value))
		b.WriteByte('"')
	}
	return b.String(), nil
}

// checkBuckets accepts finite upper bounds in strictly ascending order.
func checkBuckets(buckets []float64) error {
	for i, v := range buckets {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("bucket %d is %v; bounds must be finite (+Inf is implied)", i, v)
		}
		if i > 0 && v <= buckets[i-1] {
			return fmt.Errorf("bucket %d (%v) is not above bucket %d (%v)", i, v, i-1, buckets[i-1])
		}
	}
	return nil
}
