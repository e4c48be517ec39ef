package metrics_test

import (
	"fmt"
	"net/http/httptest"
	"os"

	"github.com/kwatch/kwatch/metrics"
)

// A Set collects the series of everything that records metrics (here
// a counter, a gauge computed at scrape time and a histogram) and serves
// them in the Prometheus text format; mount it at /metrics.
func ExampleSet() {
	reg := metrics.NewSet()
	queue := metrics.Label{Name: "name", Value: "pods"}

	synced := reg.Counter("app_syncs_total", "Syncs done.", queue)
	synced.Inc()
	synced.Add(2)
	depth := 7
	reg.GaugeFunc("app_depth", "Keys waiting.", func() float64 { return float64(depth) }, queue)
	reg.Histogram("app_sync_seconds", "Time a sync takes.", []float64{0.1, 1}, queue).Observe(0.25)
	if err := reg.Err(); err != nil { // a bad name or label would show here
		fmt.Println(err)
		return
	}

	rec := httptest.NewRecorder()
	reg.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	fmt.Println(rec.Header().Get("Content-Type"))
	os.Stdout.Write(rec.Body.Bytes())
	// Output:
	// text/plain; version=0.0.4; charset=utf-8
	// # HELP app_depth Keys waiting.
	// # TYPE app_depth gauge
	// app_depth{name="pods"} 7
	// # HELP app_sync_seconds Time a sync takes.
	// # TYPE app_sync_seconds histogram
	// app_sync_seconds_bucket{name="pods",le="0.1"} 0
	// app_sync_seconds_bucket{name="pods",le="1"} 1
	// app_sync_seconds_bucket{name="pods",le="+Inf"} 1
	// app_sync_seconds_sum{name="pods"} 0.25
	// app_sync_seconds_count{name="pods"} 1
	// # HELP app_syncs_total Syncs done.
	// # TYPE app_syncs_total counter
	// app_syncs_total{name="pods"} 3
}
