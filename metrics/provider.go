package metrics

// Counter is a monotonically increasing metric.
type Counter interface {
	Inc()
	// Add adds v, which must not be negative.
	Add(v float64)
}

// Gauge is a metric that goes up and down.
type Gauge interface {
	Set(v float64)
	Inc()
	Dec()
	Add(v float64)
}

// Histogram counts observations into buckets.
type Histogram interface {
	Observe(v float64)
}

// Provider creates the metrics a queue, a runner or an informer records.
// *Set is the built-in implementation; Noop discards everything; the
// nested module github.com/kwatch/kwatch/metrics/prometheus adapts a
// prometheus.Registerer. An adapter to another metrics library implements
// these four methods, and CounterFunc (see CounterFuncProvider) if it can.
//
// Asking twice for the same name and labels must return the same series, so
// that two queues with one name share their series as client-go's do.
// Implementations must be safe for concurrent use.
type Provider interface {
	Counter(name, help string, labels ...Label) Counter
	Gauge(name, help string, labels ...Label) Gauge
	// GaugeFunc registers a gauge whose value fn computes at scrape time.
	// Registering the same name and labels again replaces fn.
	GaugeFunc(name, help string, fn func() float64, labels ...Label)
	// Histogram creates a histogram with the given upper bounds, sorted
	// ascending; nil means DefaultDurationBuckets.
	Histogram(name, help string, buckets []float64, labels ...Label) Histogram
}

// CounterFuncProvider is a Provider that can also export a counter whose
// value fn computes at scrape time: the way to export a total that some
// other part already counts (an informer's Stats, say) without copying it
// on every change. It is a separate interface so that a Provider written
// against the four methods keeps working; use the CounterFunc function,
// which falls back when a provider lacks it.
type CounterFuncProvider interface {
	Provider
	// CounterFunc registers a counter whose value fn computes at scrape
	// time; fn must never decrease. Registering the same name and labels
	// again replaces fn.
	CounterFunc(name, help string, fn func() float64, labels ...Label)
}

// CounterFunc registers fn as a counter on p. When p is not a
// CounterFuncProvider the series is registered with GaugeFunc instead:
// same name, same values, only its declared type is gauge (PromQL's rate
// and increase work on it all the same).
func CounterFunc(p Provider, name, help string, fn func() float64, labels ...Label) {
	if cp, ok := p.(CounterFuncProvider); ok {
		cp.CounterFunc(name, help, fn, labels...)
		return
	}
	p.GaugeFunc(name, help, fn, labels...)
}

// Label is one name="value" pair of a metric series.
type Label struct {
	Name  string
	Value string
}

// DefaultDurationBuckets are the histogram upper bounds, in seconds, that a
// nil bucket list means: 10ns to 1000s by powers of ten, the bounds
// client-go's workqueue uses, so existing dashboards keep working.
var DefaultDurationBuckets = []float64{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000}

// Noop is the Provider that records nothing. Its zero value is ready to
// use and safe for concurrent use. Packages taking a Provider treat nil
// as Noop, and may skip the work that feeds metrics when given it (a
// queue then reads no clock on its hot path); IsNoop tells them.
type Noop struct{}

type noopMetric struct{}

func (noopMetric) Inc()            {}
func (noopMetric) Dec()            {}
func (noopMetric) Add(float64)     {}
func (noopMetric) Set(float64)     {}
func (noopMetric) Observe(float64) {}

var _ CounterFuncProvider = Noop{}

// Counter returns a counter that discards its updates.
func (Noop) Counter(string, string, ...Label) Counter { return noopMetric{} }

// Gauge returns a gauge that discards its updates.
func (Noop) Gauge(string, string, ...Label) Gauge { return noopMetric{} }

// GaugeFunc does nothing.
func (Noop) GaugeFunc(string, string, func() float64, ...Label) {}

// CounterFunc does nothing.
func (Noop) CounterFunc(string, string, func() float64, ...Label) {}

// Histogram returns a histogram that discards its observations.
func (Noop) Histogram(string, string, []float64, ...Label) Histogram { return noopMetric{} }

// OrNoop returns p and true, or Noop and false when p is nil or a Noop:
// whether anything p records goes anywhere.
func OrNoop(p Provider) (Provider, bool) {
	switch p.(type) {
	case nil, Noop, *Noop:
		return Noop{}, false
	}
	return p, true
}
