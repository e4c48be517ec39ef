// Package metrics is how kwatch's packages record metrics without
// depending on a metrics library: queues, runners, informers and the
// controller layer take a Provider, and a program chooses where the
// series go.
//
//   - Provider is four methods (Counter, Gauge, GaugeFunc, Histogram);
//     CounterFuncProvider adds CounterFunc, for totals another part
//     already counts. Asking again for a name and labels returns the same
//     series. A nil Provider means Noop, which records nothing.
//   - Set is the built-in Provider: lock-free series, written in the
//     Prometheus text exposition format (WritePrometheus) and served over
//     HTTP (it is an http.Handler for /metrics). It never panics on a bad
//     request (an invalid name, a type clash, more than DefaultMaxSeries
//     series): the series works but is not exported, and Err says why.
//   - The nested module github.com/kwatch/kwatch/metrics/prometheus
//     implements Provider on a prometheus.Registerer, for programs that
//     already use prometheus/client_golang; this module stays without it.
//   - Package metricstest reads the text format back, for tests.
//
// The series other packages record: queue's client-go workqueue_* names
// (labelled name="<queue>") and kwatch_reconcile_*; informer's
// kwatch_informer_* (informer.RegisterMetrics).
package metrics
