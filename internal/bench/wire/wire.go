// Package wire is the small protocol between the benchmark harness and the
// engine processes it starts: one JSON command per line on the engine's
// standard input, one JSON reply per line on its standard output.
//
// The conversation, per engine process:
//
//	sync            start the informer, wait for it to sync   -> Reply.Sync
//	arm  (phase)    watch for the phase's done marker          -> Reply{}
//	wait (phase)    block until the marker was delivered       -> Reply.Phase
//	exit            stop the informer, wait for its goroutines -> Reply{}
//
// Between arm and wait the harness writes to the server; the engine only
// observes. Times are Unix nanoseconds from the shared machine clock.
package wire

// Annotation keys the harness writes and the engines' handlers read.
const (
	// StampKey holds the Unix nanosecond time just before the server write.
	StampKey = "bench.kwatch.io/stamp"
	// DoneKey marks the last write of a phase; its value is the phase id.
	DoneKey = "bench.kwatch.io/done"
	// SeqKey makes every throughput write change the object.
	SeqKey = "bench.kwatch.io/seq"
)

// Phases an engine can be armed for.
const (
	PhaseThroughput = "throughput"
	PhaseLatency    = "latency"
	PhaseRelist     = "relist"
)

// Command is one request from the harness.
type Command struct {
	Op string `json:"op"` // "sync", "arm", "wait", "exit"
	// Phase and ID (arm): what to measure and the DoneKey value that ends it.
	Phase string `json:"phase,omitempty"`
	ID    string `json:"id,omitempty"`
	// Profile (sync, arm), when set, is a file for a CPU profile of the phase.
	Profile string `json:"profile,omitempty"`
	// TimeoutSec bounds sync and wait.
	TimeoutSec float64 `json:"timeoutSec,omitempty"`
}

// Reply answers one command. Err is set when the command failed.
type Reply struct {
	Err   string       `json:"err,omitempty"`
	Sync  *SyncResult  `json:"sync,omitempty"`
	Phase *PhaseResult `json:"phase,omitempty"`
}

// SyncResult is the initial sync as the engine saw it.
type SyncResult struct {
	Objects int   `json:"objects"`
	WallNS  int64 `json:"wallNs"` // informer start to synced
	// HandlersNS is informer start until the handler had every initial add.
	HandlersNS int64 `json:"handlersNs"`
	CPUNS      int64 `json:"cpuNs"` // user+sys of the process during the sync
	// PeakRSS is VmHWM at sync, in bytes.
	PeakRSS int64 `json:"peakRss"`
	// HeapAlloc is the live heap after two forced GCs, in bytes.
	HeapAlloc int64 `json:"heapAlloc"`
}

// PhaseResult is one armed phase as the engine saw it.
type PhaseResult struct {
	Calls   int64 `json:"calls"`   // handler calls during the phase
	FirstNS int64 `json:"firstNs"` // Unix ns of the first handler call
	// DoneNS is the Unix ns of the delivery that completed the phase: the
	// done marker, or for a relist the last call of the burst it ended.
	DoneNS int64 `json:"doneNs"`
	// CPUNS is user+sys from arm (throughput: from the first call) to done.
	CPUNS int64 `json:"cpuNs"`
	// PeakRSS is VmHWM since arm (the engine resets it), in bytes.
	PeakRSS int64 `json:"peakRss"`
	// LatencyUS holds every stamped delivery's latency in microseconds.
	LatencyUS []int32 `json:"latencyUs,omitempty"`
}

// QueueResult is one workqueue run.
type QueueResult struct {
	Items   int   `json:"items"`
	Workers int   `json:"workers"`
	WallNS  int64 `json:"wallNs"`
	CPUNS   int64 `json:"cpuNs"`
}
