package informer

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/metrics/metricstest"
)

type fakeMetricsSource struct {
	stats  Stats
	health Health
}

func (f *fakeMetricsSource) Stats() Stats   { return f.stats }
func (f *fakeMetricsSource) Health() Health { return f.health }

func TestRegisterMetrics(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	src := &fakeMetricsSource{}
	reg := metrics.NewSet()
	objects := 0
	require.NoError(t, RegisterMetrics(reg, src, MetricsOptions{Name: "pods", Now: func() time.Time { return now },
		Objects: func() int { return objects }}))
	require.NoError(t, reg.Err())
	const l = `{name="pods"}`

	now = t0.Add(90 * time.Second) // nothing heard yet: the age counts from registration
	m := metricstest.Scrape(t, reg)
	for name, want := range map[string]float64{
		MetricEvents: 0, MetricWatchRestarts: 0, MetricSynced: 0, MetricWatching: 0, MetricHandlerMerged: 0,
		MetricLastEventAge: 90, MetricHandlerBacklog: 0, MetricObjects: 0,
	} {
		if got, ok := m[name+l]; !ok || got != want {
			t.Errorf("before any activity: %s = %v (present %v), want %v", name, got, ok, want)
		}
	}

	src.stats = Stats{Events: 12, Relists: 2, Watches: 4, IdleTimeouts: 1, Gone: 1, Errors: 3,
		TransformErrors: 5, StoreErrors: 6, HandlerPanics: 7, HandlerBacklog: 8, HandlerMerged: 9}
	src.health = Health{Synced: true, Watching: true, LastActivity: now.Add(-2500 * time.Millisecond)}
	objects = 300
	m = metricstest.Scrape(t, reg)
	want := map[string]float64{
		MetricEvents: 12, MetricRelists: 2, MetricWatches: 4, MetricWatchRestarts: 3,
		MetricIdleTimeouts: 1, MetricGone: 1, MetricErrors: 3, MetricTransformErrors: 5,
		MetricStoreErrors: 6, MetricHandlerPanics: 7, MetricHandlerBacklog: 8, MetricHandlerMerged: 9,
		MetricSynced: 1, MetricWatching: 1, MetricLastEventAge: 2.5, MetricObjects: 300,
	}
	for name, w := range want {
		if got, ok := m[name+l]; !ok || got != w {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, w)
		}
	}
	if got, want := len(m), len(want); got != want {
		t.Errorf("exported %d series, want %d: %v", got, want, m)
	}
}

func TestRegisterMetricsTypes(t *testing.T) {
	reg := metrics.NewSet()
	require.NoError(t, RegisterMetrics(reg, &fakeMetricsSource{}, MetricsOptions{Name: "a"}))
	var out strings.Builder
	require.NoError(t, reg.WritePrometheus(&out))
	for _, line := range []string{
		"# TYPE " + MetricEvents + " counter",
		"# TYPE " + MetricWatchRestarts + " counter",
		"# TYPE " + MetricHandlerBacklog + " gauge",
		"# TYPE " + MetricLastEventAge + " gauge",
	} {
		require.Contains(t, out.String(), line+"\n")
	}
	require.NotContains(t, out.String(), MetricObjects, "no Objects func, no objects series")
}

func TestRegisterMetricsRefusesBadOptions(t *testing.T) {
	require.ErrorContains(t, RegisterMetrics(nil, nil, MetricsOptions{Name: "a"}), "nil MetricsSource")
	require.ErrorContains(t, RegisterMetrics(nil, &fakeMetricsSource{}, MetricsOptions{}), "MetricsOptions.Name")
	require.NoError(t, RegisterMetrics(nil, &fakeMetricsSource{}, MetricsOptions{Name: "a"}), "nil provider is Noop")
}
