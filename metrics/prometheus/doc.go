// Package prometheus adapts kwatch's metrics.Provider to
// prometheus/client_golang, for programs that already serve a
// prometheus.Registry: queues, runners and informers then record into it
// beside the program's own collectors.
//
// It lives in a module of its own (github.com/kwatch/kwatch/metrics/prometheus)
// so that the kwatch module does not depend on client_golang.
//
//   - Each metric name becomes one collector registered on the
//     Registerer at first use: a CounterVec, GaugeVec or HistogramVec, or,
//     for GaugeFunc and CounterFunc, a collector that calls the functions
//     at scrape time. Its label names are those of the first request, in
//     name order; every later request for the name must use the same.
//   - A request client_golang would refuse or panic on (a type or label
//     clash, buckets out of order, a name the Registerer refuses, a
//     negative counter increment) never panics: the series works but is
//     not exported, and Provider.Err says why, as with metrics.Set.
//     Invalid UTF-8 in label values becomes U+FFFD, as there.
//   - A collector already registered by another Provider on the same
//     Registerer is shared, so two providers over one registry agree.
package prometheus
