package report

// Metric describes one measured quantity.
type Metric struct {
	Key   string
	Title string
	Unit  string
	// Higher is true when a larger value is better.
	Higher bool
}

// Metrics are the informer metrics in table order.
var Metrics = []Metric{
	{"sync_wall_s", "initial sync, wall", "s", false},
	{"sync_cpu_s", "initial sync, CPU", "s", false},
	{"sync_peak_rss_mb", "initial sync, peak RSS", "MiB", false},
	{"heap_kb_per_pod", "live heap after sync", "KiB/pod", false},
	{"tput_events_per_s", "watch throughput", "events/s", true},
	{"tput_cpu_us_per_event", "watch CPU per event", "µs", false},
	{"tput_server_cpu_us_per_event", "server CPU per event (harness)", "µs", false},
	{"lat_p50_ms", "latency p50", "ms", false},
	{"lat_p99_ms", "latency p99", "ms", false},
	{"lat_p999_ms", "latency p99.9", "ms", false},
	{"relist_total_s", "relist after 410, total", "s", false},
	{"relist_list_s", "relist after 410, from list request", "s", false},
	{"relist_peak_rss_mb", "relist peak RSS", "MiB", false},
	{"relist_cpu_s", "relist CPU", "s", false},
	// The GC's share of each phase's span in the engine process, from
	// runtime/metrics: /cpu/classes/gc/total over /cpu/classes/total
	// (GOMAXPROCS × wall), and over the busy part of it (total - idle).
	// The runtime updates both at the end of each GC cycle, so the shares
	// cover the cycles that ended in the span (GC cycles: how many).
	{"sync_gc_share_pct", "GC share, initial sync (gc/total)", "%", false},
	{"sync_gc_busy_pct", "GC share of busy CPU, initial sync", "%", false},
	{"sync_gc_cycles", "GC cycles, initial sync", "", false},
	{"tput_gc_share_pct", "GC share, watch throughput (gc/total)", "%", false},
	{"tput_gc_busy_pct", "GC share of busy CPU, watch throughput", "%", false},
	{"tput_gc_cycles", "GC cycles, watch throughput", "", false},
	{"lat_gc_share_pct", "GC share, latency (gc/total)", "%", false},
	{"lat_gc_busy_pct", "GC share of busy CPU, latency", "%", false},
	{"lat_gc_cycles", "GC cycles, latency", "", false},
	{"relist_gc_share_pct", "GC share, relist (gc/total)", "%", false},
	{"relist_gc_busy_pct", "GC share of busy CPU, relist", "%", false},
	{"relist_gc_cycles", "GC cycles, relist", "", false},
}

// HeadlineMetrics are the metrics of the headline tables, in order.
var HeadlineMetrics = []string{
	"tput_events_per_s", "tput_cpu_us_per_event", "sync_wall_s", "heap_kb_per_pod", "sync_peak_rss_mb",
	"lat_p50_ms", "lat_p99_ms", "lat_gc_cycles", "relist_total_s", "sync_gc_share_pct", "tput_gc_share_pct",
}

// MetricByKey returns the metric with key, or false.
func MetricByKey(key string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Key == key {
			return m, true
		}
	}
	return Metric{}, false
}

// QueueMetric is the workqueue's one metric.
var QueueMetric = Metric{"queue_ops_per_s", "workqueue Add+Get+Done", "items/s", true}

// Target is one goal from the issue: Ratio (kwatch/client-go) must be at
// most Max or at least Min.
type Target struct {
	Kwatch, ClientGo string
	Metric           string
	Pods             int // 0: every pod count
	Min, Max         float64
	Text             string
}

// Targets are the goals for kwatch against client-go, same run,
// same *corev1.Pod type.
var Targets = []Target{
	{Kwatch: "kwatch", ClientGo: "client-go", Metric: "tput_events_per_s", Min: 5, Text: "≥5x client-go (JSON)"},
	{Kwatch: "kwatch-proto", ClientGo: "client-go-proto", Metric: "tput_events_per_s", Min: 1, Text: "above client-go (protobuf)"},
	{Kwatch: "kwatch", ClientGo: "client-go", Metric: "sync_wall_s", Pods: 100000, Max: 0.25, Text: "≤0.25x client-go's default path"},
	{Kwatch: "kwatch", ClientGo: "client-go", Metric: "heap_kb_per_pod", Pods: 100000, Max: 0.6, Text: "≤0.6x client-go's live heap"},
	{Kwatch: "kwatch", ClientGo: "client-go", Metric: QueueMetric.Key, Min: 1.5, Text: "≥1.5x client-go workqueue"},
	// Issue 16's goals at 100,000 pods, kwatch's default path against
	// client-go's (both protobuf); the handler reads every changed object.
	{Kwatch: "kwatch-proto", ClientGo: "client-go-proto", Metric: "heap_kb_per_pod", Pods: 100000, Max: 0.3, Text: "≤0.3x client-go's live heap (issue 16)"},
	{Kwatch: "kwatch-proto", ClientGo: "client-go-proto", Metric: "sync_peak_rss_mb", Pods: 100000, Max: 0.4, Text: "≤0.4x client-go's peak RSS (issue 16)"},
	{Kwatch: "kwatch-proto", ClientGo: "client-go-proto", Metric: "tput_events_per_s", Pods: 100000, Min: 1.5, Text: "≥1.5x, a handler reading every object (issue 16)"},
	{Kwatch: "kwatch-proto", ClientGo: "client-go-proto", Metric: "lat_p99_ms", Pods: 100000, Max: 0.5, Text: "≤0.5x client-go's latency p99 (issue 16)"},
}
