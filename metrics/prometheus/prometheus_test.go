package prometheus_test

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/metrics/metricstest"
	kwprom "github.com/kwatch/kwatch/metrics/prometheus"
	"github.com/kwatch/kwatch/queue"
	"github.com/kwatch/kwatch/watch"
)

// scrape serves reg through promhttp in the text format and returns its
// samples by `name{labels}`.
func scrape(t *testing.T, reg *prom.Registry) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.PanicOnError}).ServeHTTP(rec, req)
	require.Equal(t, 200, rec.Code, rec.Body.String())
	return metricstest.Samples(t, rec.Body.String())
}

func TestQueueSeriesMatchTheBuiltInSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		preg := prom.NewRegistry()
		adapter := kwprom.New(preg)
		builtin := metrics.NewSet()
		failed := false
		runner, err := queue.NewRunner(queue.RunnerOptions[string]{
			Workers: 2,
			Reconcile: func(ctx context.Context, key string) (queue.Result, error) {
				time.Sleep(30 * time.Millisecond) // fake time: fills the work histogram
				if key == "default/flaky" && !failed {
					failed = true
					return queue.Result{}, errors.New("transient")
				}
				return queue.Result{}, nil
			},
			Queue:  queue.RateLimitedOptions[string]{Options: queue.Options{Name: "pods", Metrics: tee{adapter, builtin}}},
			Logger: slog.New(slog.DiscardHandler),
		})
		require.NoError(t, err)
		// Added before Run, so the second default/web is deduplicated
		// whatever the scheduling: added once a worker holds the first, it
		// would be reconciled again.
		for _, k := range []string{"default/web", "default/flaky", "default/web", "kube-system/dns"} {
			runner.Add(k)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- runner.Run(ctx) }()
		time.Sleep(time.Second) // every reconcile and the retry
		synctest.Wait()
		got, want := scrape(t, preg), metricstest.Scrape(t, builtin)
		require.NoError(t, adapter.Err())
		require.NoError(t, builtin.Err())
		require.Equal(t, want, got, "client_golang's exposition differs from the built-in registry's")
		for key, v := range map[string]float64{
			`kwatch_reconcile_total{name="pods",result="success"}`: 3,
			`kwatch_reconcile_total{name="pods",result="error"}`:   1,
			`workqueue_retries_total{name="pods"}`:                 1,
			`workqueue_work_duration_seconds_count{name="pods"}`:   4,
			`workqueue_depth{name="pods"}`:                         0,
		} {
			if got[key] != v {
				t.Errorf("%s = %v, want %v", key, got[key], v)
			}
		}
		cancel()
		require.NoError(t, <-done)
	})
}

func TestInformerSeries(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		_, err := srv.PutPod(kwatchtest.Pod{Namespace: "demo", Name: name})
		require.NoError(t, err)
	}
	c, err := kube.NewClient(srv.Config())
	require.NoError(t, err)
	pods, err := informer.New(informer.Options[*metav1.PartialObjectMetadata]{
		Client: c, Resource: kube.Pods, Form: watch.FormMetadata, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	preg := prom.NewRegistry()
	adapter := kwprom.New(preg)
	require.NoError(t, informer.RegisterMetrics(adapter, pods, informer.MetricsOptions{Name: "pods", Objects: pods.Store().Len}))

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- pods.Run(ctx) }()
	require.True(t, pods.WaitForSync(ctx))
	_, err = srv.PutPod(kwatchtest.Pod{Namespace: "demo", Name: "web-4"})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return pods.Store().Len() == 4 }, time.Minute, 10*time.Millisecond)

	m := scrape(t, preg)
	cancel()
	require.NoError(t, <-done)
	require.NoError(t, adapter.Err())
	const l = `{name="pods"}`
	for name, want := range map[string]float64{
		informer.MetricRelists: 1, informer.MetricObjects: 4, informer.MetricSynced: 1, informer.MetricWatchRestarts: 0,
	} {
		if got, ok := m[name+l]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	if got := m[informer.MetricEvents+l]; got < 1 {
		t.Errorf("%s = %v, want at least the one ADDED event", informer.MetricEvents, got)
	}
	for _, name := range []string{informer.MetricLastEventAge, informer.MetricHandlerBacklog, informer.MetricWatching} {
		if _, ok := m[name+l]; !ok {
			t.Errorf("%s missing from %v", name, m)
		}
	}
	families, err := preg.Gather()
	require.NoError(t, err)
	types := map[string]string{}
	for _, f := range families {
		types[f.GetName()] = strings.ToLower(f.GetType().String())
	}
	require.Equal(t, "counter", types[informer.MetricEvents])
	require.Equal(t, "gauge", types[informer.MetricLastEventAge])
}

func TestBadRequestsAreRecordedNotPanics(t *testing.T) {
	tests := []struct {
		name    string
		do      func(p *kwprom.Provider)
		wantErr string
	}{
		{"type clash", func(p *kwprom.Provider) { p.Counter("m", "h").Inc(); p.Gauge("m", "h").Set(1) }, "requested as a gauge, already registered as a counter"},
		{"label clash", func(p *kwprom.Provider) {
			p.Counter("m", "h", metrics.Label{Name: "a", Value: "1"}).Inc()
			p.Counter("m", "h", metrics.Label{Name: "b", Value: "1"}).Inc()
		}, "one label set per name"},
		{"label twice", func(p *kwprom.Provider) {
			p.Counter("m", "h", metrics.Label{Name: "a", Value: "1"}, metrics.Label{Name: "a", Value: "2"}).Inc()
		}, "given twice"},
		{"le on histogram", func(p *kwprom.Provider) {
			p.Histogram("h", "h", nil, metrics.Label{Name: "le", Value: "1"}).Observe(1)
		}, `"le" is reserved`},
		{"unsorted buckets", func(p *kwprom.Provider) { p.Histogram("h", "h", []float64{1, 0.5}).Observe(1) }, "not above bucket 0"},
		{"infinite bucket", func(p *kwprom.Provider) { p.Histogram("h", "h", []float64{math.Inf(1)}).Observe(1) }, "must be finite"},
		{"nil func", func(p *kwprom.Provider) { p.GaugeFunc("g", "h", nil) }, "nil gauge func"},
		{"func over counter", func(p *kwprom.Provider) {
			p.Counter("c", "h").Inc()
			p.CounterFunc("c", "h", func() float64 { return 1 })
		}, "requested as a counter func, already registered as a counter"},
		{"refused by the registerer", func(p *kwprom.Provider) { p.Counter("", "h").Inc() }, "metric"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			preg := prom.NewRegistry()
			p := kwprom.New(preg)
			tt.do(p)
			require.ErrorContains(t, p.Err(), tt.wantErr)
			_, err := preg.Gather()
			require.NoError(t, err, "the registry stays consistent")
		})
	}
}

func TestCounterIgnoresNegativeAdds(t *testing.T) {
	preg := prom.NewRegistry()
	p := kwprom.New(preg)
	c := p.Counter("jobs_total", "Jobs.")
	c.Add(2)
	c.Add(-1)         // client_golang would panic
	c.Add(math.NaN()) // and this would poison the counter
	c.Inc()
	require.Equal(t, 3.0, scrape(t, preg)["jobs_total"])
}

func TestFuncsAreReadAtScrapeAndReplaced(t *testing.T) {
	preg := prom.NewRegistry()
	p := kwprom.New(preg)
	v := 1.0
	l := metrics.Label{Name: "name", Value: "a"}
	p.GaugeFunc("depth", "Depth.", func() float64 { return v }, l)
	p.CounterFunc("events_total", "Events.", func() float64 { return 10 * v }, l)
	p.GaugeFunc("depth", "Depth.", func() float64 { return 7 }, metrics.Label{Name: "name", Value: "b"})
	v = 2
	m := scrape(t, preg)
	require.Equal(t, map[string]float64{`depth{name="a"}`: 2, `depth{name="b"}`: 7, `events_total{name="a"}`: 20}, m)
	p.GaugeFunc("depth", "Depth.", func() float64 { return 5 }, l) // replaces
	require.Equal(t, 5.0, scrape(t, preg)[`depth{name="a"}`])
	require.NoError(t, p.Err())
}

func TestTwoProvidersShareARegistry(t *testing.T) {
	preg := prom.NewRegistry()
	a, b := kwprom.New(preg), kwprom.New(preg)
	l := metrics.Label{Name: "name", Value: "q"}
	a.Counter("adds_total", "Adds.", l).Inc()
	b.Counter("adds_total", "Adds.", l).Inc()
	a.GaugeFunc("up", "Up.", func() float64 { return 1 }, metrics.Label{Name: "name", Value: "a"})
	b.GaugeFunc("up", "Up.", func() float64 { return 1 }, metrics.Label{Name: "name", Value: "b"})
	require.NoError(t, a.Err())
	require.NoError(t, b.Err())
	require.Equal(t, map[string]float64{`adds_total{name="q"}`: 2, `up{name="a"}`: 1, `up{name="b"}`: 1}, scrape(t, preg))
}

func TestInvalidUTF8LabelValue(t *testing.T) {
	preg := prom.NewRegistry()
	p := kwprom.New(preg)
	p.Gauge("g", "G.", metrics.Label{Name: "v", Value: "a\xffb"}).Set(1)
	require.NoError(t, p.Err())
	require.Equal(t, 1.0, scrape(t, preg)["g{v=\"a\uFFFDb\"}"])
}

// tee records every update into two providers.
type tee struct{ a, b metrics.CounterFuncProvider }

type teeMetric struct {
	c [2]metrics.Counter
	g [2]metrics.Gauge
	h [2]metrics.Histogram
}

func (m teeMetric) Inc() {
	for i := range 2 {
		if m.c[i] != nil {
			m.c[i].Inc()
		} else {
			m.g[i].Inc()
		}
	}
}

func (m teeMetric) Add(v float64) {
	for i := range 2 {
		if m.c[i] != nil {
			m.c[i].Add(v)
		} else {
			m.g[i].Add(v)
		}
	}
}

func (m teeMetric) Set(v float64) { m.g[0].Set(v); m.g[1].Set(v) }
func (m teeMetric) Dec()          { m.g[0].Dec(); m.g[1].Dec() }
func (m teeMetric) Observe(v float64) {
	m.h[0].Observe(v)
	m.h[1].Observe(v)
}

func (t tee) Counter(name, help string, l ...metrics.Label) metrics.Counter {
	return teeMetric{c: [2]metrics.Counter{t.a.Counter(name, help, l...), t.b.Counter(name, help, l...)}}
}

func (t tee) Gauge(name, help string, l ...metrics.Label) metrics.Gauge {
	return teeMetric{g: [2]metrics.Gauge{t.a.Gauge(name, help, l...), t.b.Gauge(name, help, l...)}}
}

func (t tee) Histogram(name, help string, buckets []float64, l ...metrics.Label) metrics.Histogram {
	return teeMetric{h: [2]metrics.Histogram{t.a.Histogram(name, help, buckets, l...), t.b.Histogram(name, help, buckets, l...)}}
}

func (t tee) GaugeFunc(name, help string, fn func() float64, l ...metrics.Label) {
	t.a.GaugeFunc(name, help, fn, l...)
	t.b.GaugeFunc(name, help, fn, l...)
}

func TestConcurrentRequestsShareSeries(t *testing.T) {
	preg := prom.NewRegistry()
	p := kwprom.New(preg)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			l := metrics.Label{Name: "name", Value: "q" + strconv.Itoa(i%2)}
			for range 100 {
				p.Counter("adds_total", "Adds.", l).Inc()
				p.Histogram("latency_seconds", "Latency.", nil, l).Observe(0.5)
				p.GaugeFunc("depth", "Depth.", func() float64 { return 1 }, l)
			}
		})
	}
	wg.Wait()
	require.NoError(t, p.Err())
	m := scrape(t, preg)
	require.Equal(t, 400.0, m[`adds_total{name="q0"}`])
	require.Equal(t, 400.0, m[`adds_total{name="q1"}`])
	require.Equal(t, 400.0, m[`latency_seconds_count{name="q1"}`])
	require.Equal(t, 1.0, m[`depth{name="q0"}`])
}
