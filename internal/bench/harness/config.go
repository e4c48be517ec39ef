// Package harness runs kwatch and client-go side by side against one
// simulated API server: it starts the server (and, for client-go's
// protobuf row, a protobuf front), runs every engine in a process of its
// own, one process at a time, drives the scenarios, and collects medians.
package harness

import (
	"io"
	"path/filepath"
	"time"

	"github.com/kwatch/kwatch/internal/bench/report"
	"github.com/kwatch/kwatch/internal/bench/wire"
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
	// LatencyGC makes every engine start a garbage collection halfway
	// through the latency scenario, so that each is measured across one
	// collection of its own heap rather than as the heap's cycle happens
	// to fall.
	LatencyGC bool
	// QueueItems, QueueWorkers and QueueRuns shape the workqueue scenario.
	QueueItems   int
	QueueWorkers []int
	QueueRuns    int
	// Rows are the engine configurations to run, in the order each run
	// visits them; their Versus and Headline fields say what the report
	// compares (rows not run are left out).
	Rows []Row
	// Exe is the binary to start engines with (this program); it must
	// accept the engine flags of cmd/bench.
	Exe string
	// ProfileDir, when set, receives CPU profiles of each row's first run
	// (sync, throughput and latency phases, and the restart's sync).
	ProfileDir string
	// TraceDir, when set, receives runtime traces of TracePhases (default:
	// the latency phase) of each row's first run: the engine's,
	// <row>-<pods>-<phase>.trace, and the harness's own (it hosts the
	// servers), <row>-<pods>-<phase>-harness.trace. When the sync phase is
	// traced, so is the restarted process's: <row>-<pods>-restart-sync.trace.
	TraceDir    string
	TracePhases []string
	// EngineEnv is added to every engine's environment (for example
	// GODEBUG=gctrace=1, whose lines land in the engine logs).
	EngineEnv []string
	// LogDir receives the engines' standard error.
	LogDir string
	// Log receives progress lines.
	Log io.Writer
	// PhaseTimeout bounds each phase of an engine.
	PhaseTimeout time.Duration
}

// Row is one engine configuration. A new row is one entry in DefaultRows
// or TuningRows: its comparisons (Versus) and its place in the report's
// headline tables (Headline) go with it.
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
	// ThroughputOnly rows measure the initial sync and the throughput
	// scenario, nothing after it (the loopback limit, which cannot resume
	// a watch past its list).
	ThroughputOnly bool
	// Main rows get Config.Runs runs, others Config.ExtraRuns.
	Main bool
	// Versus names the client-go rows a kwatch row is compared with
	// (ratios kwatch/client-go), in the report's column order.
	Versus []string
	// Headline, when set on a kwatch row, puts the row and its first
	// Versus row in a headline table of the report, under this title;
	// headline tables come first, in row order.
	Headline string
}

// Pair compares a kwatch row with a client-go row.
type Pair struct{ Kwatch, ClientGo string }

// DefaultRows are the rows of the standard runs, in the order each run
// visits them. The headline pair comes first: kwatch's default path
// (protobuf for *corev1.Pod) against client-go's default (protobuf).
func DefaultRows() []Row {
	return []Row{
		{Name: "kwatch-proto", Engine: "kwatch-proto", Kwatch: true, Proto: true, Main: true,
			Versus: []string{"client-go-proto"}, Headline: "kwatch's default path (protobuf) vs client-go's default (protobuf)"},
		{Name: "client-go-proto", Engine: "client-go-proto", Proto: true, Main: true},
		{Name: "kwatch", Engine: "kwatch", Kwatch: true, Main: true,
			Versus: []string{"client-go", "client-go-proto"}, Headline: "both forced to JSON"},
		{Name: "client-go", Engine: "client-go", Main: true},
		{Name: "kwatch-slim", Engine: "kwatch-slim", Kwatch: true, Versus: []string{"client-go"}},
		{Name: "kwatch-meta", Engine: "kwatch-meta", Kwatch: true, Versus: []string{"client-go"}},
		{Name: "kwatch-paged", Engine: "kwatch", ListMode: "paged", Kwatch: true, SyncOnly: true, Versus: []string{"client-go-paged"}},
		{Name: "client-go-paged", Engine: "client-go", Env: []string{"KUBE_FEATURE_WatchListClient=false"}, SyncOnly: true},
	}
}

// PairsOf lists the comparisons rows ask for (Row.Versus), in row order.
func PairsOf(rows []Row) []Pair {
	var ps []Pair
	for _, r := range rows {
		for _, v := range r.Versus {
			ps = append(ps, Pair{r.Name, v})
		}
	}
	return ps
}

// HeadlinesOf lists the headline tables rows ask for (Row.Headline), in
// row order.
func HeadlinesOf(rows []Row) []report.Headline {
	var hs []report.Headline
	for _, r := range rows {
		if r.Headline != "" && len(r.Versus) > 0 {
			hs = append(hs, report.Headline{Title: r.Headline, Kwatch: r.Name, ClientGo: r.Versus[0]})
		}
	}
	return hs
}

// DefaultPairs are the comparisons of the standard runs.
func DefaultPairs() []Pair { return PairsOf(DefaultRows()) }

// Quick is the smoke run: small, one run each, under two minutes.
func Quick() Config {
	return Config{
		Mode: "quick", PodCounts: []int{2000}, Runs: 1, ExtraRuns: 1,
		ThroughputEvents: 20000, LatencyRate: 500, LatencyEvents: 1000,
		QueueItems: 200000, QueueWorkers: []int{1, 4, 16}, QueueRuns: 1,
		Rows: DefaultRows(), PhaseTimeout: 5 * time.Minute,
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
		Rows: DefaultRows(), PhaseTimeout: 10 * time.Minute,
	}
}

// TuningRows try kwatch settings other than the defaults.
func TuningRows() []Row {
	return []Row{
		{Name: "kwatch-par1", Engine: "kwatch", Parallelism: 1, Kwatch: true, Versus: []string{"client-go"}},
		{Name: "kwatch-par2", Engine: "kwatch", Parallelism: 2, Kwatch: true, Versus: []string{"client-go"}},
		{Name: "kwatch-par4", Engine: "kwatch", Parallelism: 4, Kwatch: true, Versus: []string{"client-go"}},
		{Name: "kwatch-paged-5000", Engine: "kwatch", ListMode: "paged", PageSize: 5000, Kwatch: true, SyncOnly: true, Versus: []string{"client-go-paged"}},
		{Name: "kwatch-proto-nointern", Engine: "kwatch-proto-nointern", Kwatch: true, Proto: true, Versus: []string{"client-go-proto"}},
	}
}

// tracePrefix is the path prefix of the traces of an engine process named
// name in run, or "" when that process is not traced (no TraceDir, or not
// the first run).
func (cfg *Config) tracePrefix(name string, run int) string {
	if cfg.TraceDir == "" || run != 0 {
		return ""
	}
	return filepath.Join(cfg.TraceDir, name)
}

// tracePhases are the phases TraceDir traces: TracePhases, or the latency
// phase alone.
func (cfg *Config) tracePhases() []string {
	if len(cfg.TracePhases) > 0 {
		return cfg.TracePhases
	}
	return []string{wire.PhaseLatency}
}
