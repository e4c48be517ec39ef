package report

// Issue 16's goals for the compact store at 100,000 pods, against
// client-go's default path (protobuf) and, for a key-only consumer,
// client-go over JSON.
var compactTargets = []Target{
	{Kwatch: "kwatch-compact", ClientGo: "client-go-proto", Metric: "heap_kb_per_pod", Pods: 100000, Max: 0.3, Text: "≤0.3x client-go's live heap (issue 16)"},
	{Kwatch: "kwatch-compact", ClientGo: "client-go-proto", Metric: "sync_peak_rss_mb", Pods: 100000, Max: 0.4, Text: "≤0.4x client-go's peak RSS (issue 16)"},
	{Kwatch: "kwatch-compact", ClientGo: "client-go-proto", Metric: "tput_events_per_s", Pods: 100000, Min: 3, Text: "≥3x, a key-only consumer (issue 16)"},
	{Kwatch: "kwatch-compact", ClientGo: "client-go-proto", Metric: "lat_p99_ms", Pods: 100000, Max: 0.5, Text: "≤0.5x client-go's latency p99 (issue 16)"},
	{Kwatch: "kwatch-compact", ClientGo: "client-go", Metric: "tput_events_per_s", Pods: 100000, Min: 10, Text: "≥10x client-go JSON, a key-only consumer (issue 16)"},
	{Kwatch: "kwatch-compact", ClientGo: "client-go-proto", Metric: "restart_wall_s", Pods: 100000, Max: 0.05, Text: "≤0.05x client-go's relist, restarting from a snapshot (issue 16)"},
	{Kwatch: "kwatch-compact", ClientGo: "wire-limit", Metric: "tput_events_per_s", Pods: 100000, Min: 0.9, Text: "≥0.9 of the loopback limit, a key-only consumer (issue 25)"},
	{Kwatch: "kwatch-compact-read", ClientGo: "client-go-proto", Metric: "heap_kb_per_pod", Pods: 100000, Max: 0.3, Text: "≤0.3x client-go's live heap (issue 16)"},
	{Kwatch: "kwatch-compact-read", ClientGo: "client-go-proto", Metric: "sync_peak_rss_mb", Pods: 100000, Max: 0.4, Text: "≤0.4x client-go's peak RSS (issue 16)"},
	{Kwatch: "kwatch-compact-read", ClientGo: "client-go-proto", Metric: "tput_events_per_s", Pods: 100000, Min: 1.5, Text: "≥1.5x, a consumer reading every object (issue 16)"},
	{Kwatch: "kwatch-compact-read", ClientGo: "client-go-proto", Metric: "lat_p99_ms", Pods: 100000, Max: 0.5, Text: "≤0.5x client-go's latency p99 (issue 16)"},
}

func init() {
	Targets = append(Targets, compactTargets...)
	Metrics = append(Metrics, restartMetrics...)
	HeadlineMetrics = append(HeadlineMetrics, "restart_wall_s", "restart_cpu_s")
}

// The restart scenario's metrics (harness/restart.go).
var restartMetrics = []Metric{
	{"restart_wall_s", "restart, start to synced", "s", false},
	{"restart_cpu_s", "restart CPU, start to synced", "s", false},
	{"restart_handlers_s", "restart, start to the handler's last add", "s", false},
	{"restart_peak_rss_mb", "restart peak RSS", "MiB", false},
	{"restart_heap_kb_per_pod", "live heap after restart", "KiB/pod", false},
	{"restart_snapshot_mb", "snapshot file", "MiB", false},
}
