// Package harness runs kwatch and client-go side by side against one
// simulated API server: it starts the server (and, for client-go's
// protobuf row, a protobuf front), runs every engine in a process of its
// own, one process at a time, drives the scenarios, and collects medians.
package harness

import (
	"io"
	"time"
)

// Config is one benchmark run. Quick and Full give the two standard ones.
type Config struct {
	Mode      string // names the output files: "quick", "full", "test"
	PodCounts []int
	// Runs is how many runs each main row gets per pod count; ExtraRuns is
	// for the other rows. Medians are taken over runs. MainRunsAt overrides
	// Runs for some pod counts.
	Runs, ExtraRuns int
	MainRunsAt      map[int]int
	// ThroughputEvents is how many MODIFIED events the throughput scenario
	// streams.
	ThroughputEvents int
	// LatencyRate (events/s) and LatencyEvents shape the latency scenario.
	LatencyRate   float64
	LatencyEvents int
	// QueueItems, QueueWorkers and QueueRuns shape the workqueue scenario.
	QueueItems   int
	QueueWorkers []int
	QueueRuns    int
	// Rows are the engine configurations to run; Pairs say which are
	// compared.
	Rows  []Row
	Pairs []Pair
	// Exe is the binary to start engines with (this program); it must
	// accept the engine flags of cmd/bench.
	Exe string
	// ProfileDir, when set, receives CPU profiles of each row's first run
	// (sync and throughput phases).
	ProfileDir string
	// LogDir receives the engines' standard error.
	LogDir string
	// Log receives progress lines.
	Log io.Writer
	// PhaseTimeout bounds each phase of an engine.
	PhaseTimeout time.Duration
}

// Row is one engine configuration.
type Row struct {
	Name   string
	Engine string // engine.Config.Engine
	// Kwatch is true for kwatch rows (ratios are kwatch over client-go).
	Kwatch bool
	// ListMode, PageSize and Parallelism tune kwatch rows.
	ListMode    string
	PageSize    int64
	Parallelism int
	// Env is added to the engine's environment (client-go reads feature
	// gates from there).
	Env []string
	// Proto rows talk to the protobuf front instead of the simulator.
	Proto bool
	// SyncOnly rows measure the initial sync and the relist (the list
	// path differs), not the watch scenarios (their watch path is the main
	// row's).
	SyncOnly bool
	// Main rows get Config.Runs runs, others Config.ExtraRuns.
	Main bool
}

// Pair compares a kwatch row with a client-go row.
type Pair struct{ Kwatch, ClientGo string }

// DefaultRows are the rows of the standard runs.
func DefaultRows() []Row {
	return []Row{
		{Name: "kwatch", Engine: "kwatch", Kwatch: true, Main: true},
		{Name: "client-go", Engine: "client-go", Main: true},
		{Name: "client-go-proto", Engine: "client-go-proto", Proto: true},
		{Name: "kwatch-proto", Engine: "kwatch-proto", Kwatch: true, Proto: true},
		{Name: "kwatch-slim", Engine: "kwatch-slim", Kwatch: true},
		{Name: "kwatch-meta", Engine: "kwatch-meta", Kwatch: true},
		{Name: "kwatch-paged", Engine: "kwatch", ListMode: "paged", Kwatch: true, SyncOnly: true},
		{Name: "client-go-paged", Engine: "client-go", Env: []string{"KUBE_FEATURE_WatchListClient=false"}, SyncOnly: true},
	}
}

// DefaultPairs are the comparisons of the standard runs.
func DefaultPairs() []Pair {
	return []Pair{
		{"kwatch", "client-go"},
		{"kwatch", "client-go-proto"},
		{"kwatch-proto", "client-go-proto"},
		{"kwatch-slim", "client-go"},
		{"kwatch-meta", "client-go"},
		{"kwatch-paged", "client-go-paged"},
	}
}

// Quick is the smoke run: small, one run each, under two minutes.
func Quick() Config {
	return Config{
		Mode: "quick", PodCounts: []int{2000}, Runs: 1, ExtraRuns: 1,
		ThroughputEvents: 20000, LatencyRate: 500, LatencyEvents: 1000,
		QueueItems: 200000, QueueWorkers: []int{1, 4, 16}, QueueRuns: 1,
		Rows: DefaultRows(), Pairs: DefaultPairs(), PhaseTimeout: 5 * time.Minute,
	}
}

// Full is the standard run at 10,000 and 100,000 pods.
func Full() Config {
	return Config{
		// One run of each row at 100,000 pods: client-go alone needs about
		// four minutes there, and the whole run must stay under 20 minutes.
		Mode: "full", PodCounts: []int{10000, 100000}, Runs: 3, ExtraRuns: 1, MainRunsAt: map[int]int{100000: 1},
		ThroughputEvents: 200000, LatencyRate: 1000, LatencyEvents: 5000,
		QueueItems: 1000000, QueueWorkers: []int{1, 4, 16}, QueueRuns: 7,
		Rows: DefaultRows(), Pairs: DefaultPairs(), PhaseTimeout: 10 * time.Minute,
	}
}

// TuningRows try kwatch settings other than the defaults.
func TuningRows() []Row {
	return []Row{
		{Name: "kwatch-par1", Engine: "kwatch", Parallelism: 1, Kwatch: true},
		{Name: "kwatch-par2", Engine: "kwatch", Parallelism: 2, Kwatch: true},
		{Name: "kwatch-par4", Engine: "kwatch", Parallelism: 4, Kwatch: true},
		{Name: "kwatch-paged-5000", Engine: "kwatch", ListMode: "paged", PageSize: 5000, Kwatch: true, SyncOnly: true},
		{Name: "kwatch-proto-nointern", Engine: "kwatch-proto-nointern", Kwatch: true, Proto: true},
	}
}

// TuningPairs compare the tuning rows with client-go.
func TuningPairs() []Pair {
	return []Pair{{"kwatch-par1", "client-go"}, {"kwatch-par2", "client-go"}, {"kwatch-par4", "client-go"}, {"kwatch-paged-5000", "client-go-paged"},
		{"kwatch-proto-nointern", "client-go-proto"}}
}
