package queue

import (
	"math"
	"testing"
	"time"

	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/metrics/metricstest"

	"github.com/stretchr/testify/require"
)

// samples scrapes r into a map from `name{labels}` to value.
func samples(t *testing.T, r *metrics.Set) map[string]float64 {
	t.Helper()
	return metricstest.Scrape(t, r)
}

func TestQueueMetrics(t *testing.T) {
	clock := newFakeClock()
	reg := metrics.NewSet()
	q := NewRateLimited(RateLimitedOptions[string]{Options: Options{Name: "pods", Clock: clock, Metrics: reg}})
	const l = `{name="pods"}`

	q.Add("a")
	q.Add("a") // deduplicated: not an add
	q.Add("b")
	clock.Step(2 * time.Second)
	k, _ := q.Get()
	clock.Step(3 * time.Second)
	m := samples(t, reg)
	want := map[string]float64{
		MetricDepth + l:                                      1,
		MetricAdds + l:                                       2,
		MetricQueueDuration + "_count" + l:                   1,
		MetricQueueDuration + "_sum" + l:                     2,
		MetricWorkDuration + "_count" + l:                    0,
		MetricUnfinishedWork + l:                             3,
		MetricLongestRunningProcessor + l:                    3,
		MetricRetries + l:                                    0,
		MetricQueueDuration + `_bucket{name="pods",le="1"}`:  0,
		MetricQueueDuration + `_bucket{name="pods",le="10"}`: 1,
	}
	for name, w := range want {
		if got, ok := m[name]; !ok || math.Abs(got-w) > 1e-9 {
			t.Errorf("while %s is processing: %s = %v (present %v), want %v", k, name, got, ok, w)
		}
	}

	q.Done(k)
	q.AddRateLimited(k)
	clock.Step(time.Second)
	m = samples(t, reg)
	want = map[string]float64{
		MetricWorkDuration + "_count" + l: 1,
		MetricWorkDuration + "_sum" + l:   3,
		MetricUnfinishedWork + l:          0,
		MetricLongestRunningProcessor + l: 0,
		MetricRetries + l:                 1,
		MetricAdds + l:                    3,
		MetricDepth + l:                   2,
	}
	for name, w := range want {
		if got := m[name]; math.Abs(got-w) > 1e-9 {
			t.Errorf("after Done and a retry: %s = %v, want %v", name, got, w)
		}
	}
	require.NoError(t, reg.Err())
}

func TestMetricsOffReadsNoClock(t *testing.T) {
	c := &countingClock{fakeClock: newFakeClock()}
	q := New[int](Options{Clock: c})
	before := c.reads
	for i := range 100 {
		q.Add(i)
		k, _ := q.Get()
		q.Done(k)
	}
	if got := c.reads - before; got != 0 {
		t.Errorf("clock read %d times by Add/Get/Done without metrics, want 0", got)
	}
}

// countingClock counts Now calls. Only used from one goroutine.
type countingClock struct {
	*fakeClock
	reads int
}

func (c *countingClock) Now() time.Time {
	c.reads++
	return c.fakeClock.Now()
}
