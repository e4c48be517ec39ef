package queue

import (
	"time"

	"github.com/kwatch/kwatch/metrics"
)

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
	// MetricPriorityDepth and MetricPriorityWait split workqueue_depth and
	// workqueue_queue_duration_seconds by the lane a key waits in; they
	// are labelled name and priority ("low" or "normal"). A key that moved
	// up counts its whole wait, from its first add, as normal.
	MetricPriorityDepth = "kwatch_workqueue_priority_depth"
	MetricPriorityWait  = "kwatch_workqueue_priority_wait_seconds"
)

// queueMetrics are the series of one queue. With metrics off every field is
// a no-op and the queue skips the clock reads that feed them.
type queueMetrics struct {
	depth   metrics.Gauge
	adds    metrics.Counter
	latency metrics.Histogram
	work    metrics.Histogram
	retries metrics.Counter
	// depthBy and waitBy are indexed by Priority.lane: low, normal.
	depthBy [2]metrics.Gauge
	waitBy  [2]metrics.Histogram
}

func newQueueMetrics(p metrics.Provider, name string) queueMetrics {
	l := metrics.Label{Name: "name", Value: name}
	m := queueMetrics{
		depth:   p.Gauge(MetricDepth, "Current depth of the workqueue.", l),
		adds:    p.Counter(MetricAdds, "Total number of adds handled by the workqueue.", l),
		latency: p.Histogram(MetricQueueDuration, "How long in seconds an item stays in the workqueue before being requested.", metrics.DefaultDurationBuckets, l),
		work:    p.Histogram(MetricWorkDuration, "How long in seconds processing an item from the workqueue takes.", metrics.DefaultDurationBuckets, l),
		retries: p.Counter(MetricRetries, "Total number of retries handled by the workqueue.", l),
	}
	for _, pr := range []Priority{PriorityLow, PriorityNormal} {
		pl := metrics.Label{Name: "priority", Value: pr.String()}
		m.depthBy[pr.lane()] = p.Gauge(MetricPriorityDepth, "Current depth of the workqueue by priority.", l, pl)
		m.waitBy[pr.lane()] = p.Histogram(MetricPriorityWait, "How long in seconds an item waits in the workqueue before being requested, by the priority it was handed out at.", metrics.DefaultDurationBuckets, l, pl)
	}
	return m
}

// seconds converts a duration to float seconds for a metric.
func seconds(d time.Duration) float64 { return d.Seconds() }
