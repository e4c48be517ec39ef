package webhook

import "github.com/kwatch/kwatch/metrics"

// The series a Server records, each labelled webhook="<path>"; answers
// also answer="<answer>".
const (
	MetricRequests = "kwatch_webhook_requests_total"
	MetricLatency  = "kwatch_webhook_request_duration_seconds"
	MetricAnswers  = "kwatch_webhook_answers_total"
)

// The values of MetricAnswers' answer label.
const (
	AnswerAllowed   = "allowed"   // an admission request admitted
	AnswerDenied    = "denied"    // an admission request denied (by the handler, a panic or a timeout)
	AnswerConverted = "converted" // a conversion request whose objects were all converted
	AnswerFailed    = "failed"    // a conversion request failed
	AnswerRejected  = "rejected"  // a body that is no review this path serves: 400, 413 or 415
)

// latencyBuckets are MetricLatency's upper bounds, in seconds: 100µs to
// 30s (the API server's longest webhook timeout), since a webhook's
// latency adds to every write it admits.
var latencyBuckets = []float64{1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// pathMetrics are one path's series, made when the path is registered so
// that a request looks nothing up.
type pathMetrics struct {
	requests metrics.Counter
	latency  metrics.Histogram
	answers  map[string]metrics.Counter
}

func newPathMetrics(p metrics.Provider, path string) *pathMetrics {
	p, _ = metrics.OrNoop(p)
	l := metrics.Label{Name: "webhook", Value: path}
	m := &pathMetrics{
		requests: p.Counter(MetricRequests, "Webhook requests received, by path.", l),
		latency:  p.Histogram(MetricLatency, "Time from a webhook request's arrival to its answer, by path.", latencyBuckets, l),
		answers:  map[string]metrics.Counter{},
	}
	for _, a := range []string{AnswerAllowed, AnswerDenied, AnswerConverted, AnswerFailed, AnswerRejected} {
		m.answers[a] = p.Counter(MetricAnswers, "Webhook answers, by path and answer.", l, metrics.Label{Name: "answer", Value: a})
	}
	return m
}
