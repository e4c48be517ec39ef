package prometheus

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	prom "github.com/prometheus/client_golang/prometheus"

	"github.com/kwatch/kwatch/metrics"
)

// maxRecordedErrors bounds the errors a Provider remembers.
const maxRecordedErrors = 32

// Provider is a metrics.CounterFuncProvider that creates its series on a
// prometheus.Registerer. Build it with New (the zero value is not usable);
// it is safe for concurrent use, and its series are client_golang's own,
// so updates cost what they cost there. Most callers pass it as the
// Metrics option of a queue, a runner or informer.RegisterMetrics, and
// serve the Registerer's registry with promhttp.
type Provider struct {
	reg prom.Registerer

	mu       sync.Mutex
	families map[string]*family // by metric name
	errs     []error            // at most maxRecordedErrors
	dropped  int                // errors not kept in errs
}

var _ metrics.CounterFuncProvider = (*Provider)(nil)

// New returns a Provider registering on reg; nil means
// prometheus.DefaultRegisterer. It registers nothing until asked.
func New(reg prom.Registerer) *Provider {
	if reg == nil {
		reg = prom.DefaultRegisterer
	}
	return &Provider{reg: reg}
}

type kind int

const (
	kindCounter kind = iota
	kindGauge
	kindHistogram
	kindCounterFunc
	kindGaugeFunc
)

func (k kind) String() string {
	return [...]string{"counter", "gauge", "histogram", "counter func", "gauge func"}[k]
}

// family is the collector of one metric name. Exactly one of counters,
// gauges, histograms or funcs is set, by kind.
type family struct {
	kind       kind
	labelNames []string // sorted
	counters   *prom.CounterVec
	gauges     *prom.GaugeVec
	histograms *prom.HistogramVec
	funcs      *funcCollector
	// broken is why the Registerer refused the collector; every request
	// for the name then gets an unexported series.
	broken error
}

// Counter returns the counter series name{labels}.
func (p *Provider) Counter(name, help string, labels ...metrics.Label) metrics.Counter {
	f, values, ok := p.lookup(name, help, kindCounter, nil, labels)
	if !ok {
		return metrics.Noop{}.Counter(name, help)
	}
	c, err := f.counters.GetMetricWithLabelValues(values...)
	if err != nil {
		p.recordf("metric %s: %v", name, err)
		return metrics.Noop{}.Counter(name, help)
	}
	return counter{c}
}

// Gauge returns the gauge series name{labels}.
func (p *Provider) Gauge(name, help string, labels ...metrics.Label) metrics.Gauge {
	f, values, ok := p.lookup(name, help, kindGauge, nil, labels)
	if !ok {
		return metrics.Noop{}.Gauge(name, help)
	}
	g, err := f.gauges.GetMetricWithLabelValues(values...)
	if err != nil {
		p.recordf("metric %s: %v", name, err)
		return metrics.Noop{}.Gauge(name, help)
	}
	return g
}

// Histogram returns the histogram series name{labels} with the given upper
// bounds (ascending, finite; nil means metrics.DefaultDurationBuckets). A
// name keeps the bounds it was first registered with.
func (p *Provider) Histogram(name, help string, buckets []float64, labels ...metrics.Label) metrics.Histogram {
	if buckets == nil {
		buckets = metrics.DefaultDurationBuckets
	}
	if err := checkBuckets(buckets); err != nil {
		p.recordf("metric %s: %v", name, err)
		return metrics.Noop{}.Histogram(name, help, nil)
	}
	f, values, ok := p.lookup(name, help, kindHistogram, buckets, labels)
	if !ok {
		return metrics.Noop{}.Histogram(name, help, nil)
	}
	h, err := f.histograms.GetMetricWithLabelValues(values...)
	if err != nil {
		p.recordf("metric %s: %v", name, err)
		return metrics.Noop{}.Histogram(name, help, nil)
	}
	return h
}

// GaugeFunc registers the gauge series name{labels} whose value is fn() at
// scrape time; registering it again replaces fn.
func (p *Provider) GaugeFunc(name, help string, fn func() float64, labels ...metrics.Label) {
	p.registerFunc(name, help, kindGaugeFunc, fn, labels)
}

// CounterFunc registers the counter series name{labels} whose value is
// fn() at scrape time; registering it again replaces fn. fn must never
// decrease.
func (p *Provider) CounterFunc(name, help string, fn func() float64, labels ...metrics.Label) {
	p.registerFunc(name, help, kindCounterFunc, fn, labels)
}

func (p *Provider) registerFunc(name, help string, k kind, fn func() float64, labels []metrics.Label) {
	if fn == nil {
		p.recordf("metric %s: nil %s", name, k)
		return
	}
	f, values, ok := p.lookup(name, help, k, nil, labels)
	if ok {
		f.funcs.set(values, fn)
	}
}

// Err returns the problems met while registering series, joined, or nil.
func (p *Provider) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	errs := slices.Clone(p.errs)
	if p.dropped > 0 {
		errs = append(errs, fmt.Errorf("and %d more metric registration errors", p.dropped))
	}
	return errors.Join(errs...)
}

// lookup finds or creates the family of name and returns the label values
// of labels in its order. It reports false, having recorded why, when the
// request cannot be honoured.
func (p *Provider) lookup(name, help string, k kind, buckets []float64, labels []metrics.Label) (*family, []string, bool) {
	names, values, err := splitLabels(labels, k == kindHistogram)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.recordLocked(fmt.Errorf("metric %q: %w", name, err))
		return nil, nil, false
	}
	f := p.families[name]
	if f == nil {
		f = p.newFamilyLocked(name, help, k, buckets, names)
	}
	switch {
	case f.broken != nil:
		return nil, nil, false
	case f.kind != k:
		p.recordLocked(fmt.Errorf("metric %s: requested as a %s, already registered as a %s", name, k, f.kind))
		return nil, nil, false
	case !slices.Equal(f.labelNames, names):
		p.recordLocked(fmt.Errorf("metric %s: labels %q, already registered with %q (client_golang needs one label set per name)",
			name, names, f.labelNames))
		return nil, nil, false
	}
	return f, values, true
}

// newFamilyLocked builds the collector of name, registers it and
// remembers the family, broken if the Registerer refused it. p.mu must be
// held.
func (p *Provider) newFamilyLocked(name, help string, k kind, buckets []float64, names []string) *family {
	f := &family{kind: k, labelNames: names}
	var c prom.Collector
	switch k {
	case kindCounter:
		f.counters = prom.NewCounterVec(prom.CounterOpts{Name: name, Help: help}, names)
		c = f.counters
	case kindGauge:
		f.gauges = prom.NewGaugeVec(prom.GaugeOpts{Name: name, Help: help}, names)
		c = f.gauges
	case kindHistogram:
		f.histograms = prom.NewHistogramVec(prom.HistogramOpts{Name: name, Help: help, Buckets: slices.Clone(buckets)}, names)
		c = f.histograms
	default:
		vt := prom.GaugeValue
		if k == kindCounterFunc {
			vt = prom.CounterValue
		}
		f.funcs = newFuncCollector(prom.NewDesc(name, help, names, nil), vt)
		c = f.funcs
	}
	if err := p.reg.Register(c); err != nil {
		f.broken = p.adoptLocked(f, err)
		if f.broken != nil {
			p.recordLocked(fmt.Errorf("metric %s: %w", name, f.broken))
		}
	}
	if p.families == nil {
		p.families = make(map[string]*family)
	}
	p.families[name] = f
	return f
}

// adoptLocked makes f use the collector another Provider registered for
// the same name, when that is what err reports and the collector is of
// f's type; otherwise it returns err. p.mu must be held.
func (p *Provider) adoptLocked(f *family, err error) error {
	var are prom.AlreadyRegisteredError
	if !errors.As(err, &are) {
		return err
	}
	switch existing := are.ExistingCollector.(type) {
	case *prom.CounterVec:
		if f.counters != nil {
			f.counters = existing
			return nil
		}
	case *prom.GaugeVec:
		if f.gauges != nil {
			f.gauges = existing
			return nil
		}
	case *prom.HistogramVec:
		if f.histograms != nil {
			f.histograms = existing
			return nil
		}
	case *funcCollector:
		if f.funcs != nil && existing.valueType == f.funcs.valueType {
			f.funcs = existing
			return nil
		}
	}
	return err
}

// recordf records a problem.
func (p *Provider) recordf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recordLocked(fmt.Errorf(format, args...))
}

// recordLocked remembers err, up to maxRecordedErrors. p.mu must be held.
func (p *Provider) recordLocked(err error) {
	if len(p.errs) < maxRecordedErrors {
		p.errs = append(p.errs, err)
		return
	}
	p.dropped++
}

// counter is a client_golang counter that ignores what would make it
// panic: a negative or NaN increment.
type counter struct{ c prom.Counter }

func (c counter) Inc() { c.c.Inc() }

func (c counter) Add(v float64) {
	if v > 0 {
		c.c.Add(v)
	}
}

// splitLabels sorts labels by name and returns their names and values,
// values made valid UTF-8.
func splitLabels(labels []metrics.Label, histogram bool) (names, values []string, err error) {
	sorted := slices.Clone(labels)
	slices.SortFunc(sorted, func(a, b metrics.Label) int { return strings.Compare(a.Name, b.Name) })
	for i, l := range sorted {
		if i > 0 && sorted[i-1].Name == l.Name {
			return nil, nil, fmt.Errorf("label name %q given twice", l.Name)
		}
		if histogram && l.Name == "le" {
			return nil, nil, errors.New(`label name "le" is reserved for histogram buckets`)
		}
		names = append(names, l.Name)
		values = append(values, strings.ToValidUTF8(l.Value, "\uFFFD"))
	}
	return names, values, nil
}

// checkBuckets accepts finite upper bounds in strictly ascending order,
// which client_golang would otherwise panic on.
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
