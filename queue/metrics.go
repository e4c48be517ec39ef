package queue

import "time"

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

// MetricsProvider creates the metrics a queue or runner records. *Registry
// is the built-in implementation; NoopMetrics discards everything. An
// adapter to another metrics library implements these four methods.
//
// Asking twice for the same name and labels must return the same series, so
// that two queues with one name share their series as client-go's do.
// Implementations must be safe for concurrent use.
type MetricsProvider interface {
	Counter(name, help string, labels ...Label) Counter
	Gauge(name, help string, labels ...Label) Gauge
	// GaugeFunc registers a gauge whose value fn computes at scrape time.
	// Registering the same name and labels again replaces fn.
	GaugeFunc(name, help string, fn func() float64, labels ...Label)
	// Histogram creates a histogram with the given upper bounds, sorted
	// ascending; nil means DefaultDurationBuckets.
	Histogram(name, help string, buckets []float64, labels ...Label) Histogram
}

// Label is one name="value" pair of a metric series.
type Label struct {
	Name  string
	Value string
}

// DefaultDurationBuckets are the histogram upper bounds, in seconds, of the
// queue and work duration histograms: 10ns to 1000s by powers of ten, the
// bounds client-go's workqueue uses, so existing dashboards keep working.
var DefaultDurationBuckets = []float64{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000}

// The metric names a queue records, each labelled name="<queue name>". They
// are client-go's workqueue names, so existing scrapes and alerts apply.
const (
	MetricDepth                   = "workqueue_depth"
	MetricAdds                    = "workqueue_adds_total"
	MetricQueueDuration           = "workqueue_queue_duration_seconds"
	MetricWorkDuration            = "workqueue_work_duration_seconds"
	MetricUnfinishedWork          = "workqueue_unfinished_work_seconds"
	MetricLongestRunningProcessor = "workqueue_longest_running_processor_seconds"
	MetricRetries                 = "workqueue_retries_total"
	// MetricReconcile is labelled name and result ("success", "error",
	// "requeue" or "panic").
	MetricReconcile       = "kwatch_reconcile_total"
	MetricReconcilePanics = "kwatch_reconcile_panics_total"
)

// NoopMetrics is the MetricsProvider that records nothing. It is the
// default of every Options struct; a queue given NoopMetrics does not read
// the clock on its hot path.
type NoopMetrics struct{}

type noopMetric struct{}

func (noopMetric) Inc()            {}
func (noopMetric) Dec()            {}
func (noopMetric) Add(float64)     {}
func (noopMetric) Set(float64)     {}
func (noopMetric) Observe(float64) {}

// Counter returns a counter that discards its updates.
func (NoopMetrics) Counter(string, string, ...Label) Counter { return noopMetric{} }

// Gauge returns a gauge that discards its updates.
func (NoopMetrics) Gauge(string, string, ...Label) Gauge { return noopMetric{} }

// GaugeFunc does nothing.
func (NoopMetrics) GaugeFunc(string, string, func() float64, ...Label) {}

// Histogram returns a histogram that discards its observations.
func (NoopMetrics) Histogram(string, string, []float64, ...Label) Histogram { return noopMetric{} }

// metricsOrNoop returns m and whether it records anything.
func metricsOrNoop(m MetricsProvider) (MetricsProvider, bool) {
	switch m.(type) {
	case nil, NoopMetrics, *NoopMetrics:
		return NoopMetrics{}, false
	}
	return m, true
}

// queueMetrics are the series of one queue. With metrics off every field is
// a no-op and the queue skips the clock reads that feed them.
type queueMetrics struct {
	depth   Gauge
	adds    Counter
	latency Histogram
	work    Histogram
	retries Counter
}

func newQueueMetrics(p MetricsProvider, name string) queueMetrics {
	l := Label{Name: "name", Value: name}
	return queueMetrics{
		depth:   p.Gauge(MetricDepth, "Current depth of the workqueue.", l),
		adds:    p.Counter(MetricAdds, "Total number of adds handled by the workqueue.", l),
		latency: p.Histogram(MetricQueueDuration, "How long in seconds an item stays in the workqueue before being requested.", DefaultDurationBuckets, l),
		work:    p.Histogram(MetricWorkDuration, "How long in seconds processing an item from the workqueue takes.", DefaultDurationBuckets, l),
		retries: p.Counter(MetricRetries, "Total number of retries handled by the workqueue.", l),
	}
}

// seconds converts a duration to float seconds for a metric.
func seconds(d time.Duration) float64 { return d.Seconds() }
