package engine

import (
	"fmt"
	"os"
	"runtime/metrics"
	"time"

	"github.com/kwatch/kwatch/internal/bench/report"
)

// The runtime/metrics the GC share is computed from.
const (
	metricGC    = "/cpu/classes/gc/total:cpu-seconds"
	metricTotal = "/cpu/classes/total:cpu-seconds"
	metricIdle  = "/cpu/classes/idle:cpu-seconds"
	metricCycle = "/gc/cycles/total:gc-cycles"
)

// readGCCPU reads the process's cumulative GC, total and idle CPU
// estimates. It does not stop the world, so a handler may call it.
func readGCCPU() report.GCCPU {
	s := []metrics.Sample{{Name: metricGC}, {Name: metricTotal}, {Name: metricIdle}, {Name: metricCycle}}
	metrics.Read(s)
	val := func(i int) float64 {
		switch s[i].Value.Kind() {
		case metrics.KindFloat64:
			return s[i].Value.Float64()
		case metrics.KindUint64:
			return float64(s[i].Value.Uint64())
		}
		return 0
	}
	return report.GCCPU{GCS: val(0), TotalS: val(1), IdleS: val(2), Cycles: val(3)}
}

// processStart approximates the runtime's start, from which GODEBUG=gctrace
// lines count ("@12.345s").
var processStart = time.Now()

// mark writes a line to standard error (the engine's log) with the time
// since the process started, so that a phase's span can be found among
// gctrace lines.
func mark(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: @%.3fs %s\n", time.Since(processStart).Seconds(), fmt.Sprintf(format, args...))
}
