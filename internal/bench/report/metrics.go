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
}
