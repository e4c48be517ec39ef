package report

// GCCPU is the garbage collector's CPU over one span of an engine process,
// as the Go runtime estimates it (runtime/metrics' /cpu/classes, which
// count GOMAXPROCS × wall time, busy or not).
//
// The runtime updates the /cpu/classes figures only at the end of each
// GC cycle (mark termination), so a span's figures cover the cycles that
// ended within it, from the end of the cycle before: a span in which no
// cycle ended reads 0 (Cycles says how many ended).
type GCCPU struct {
	// GCS is /cpu/classes/gc/total:cpu-seconds over the span: marking
	// (background workers and assists) plus pauses.
	GCS float64 `json:"gcS"`
	// TotalS is /cpu/classes/total:cpu-seconds over the span: GOMAXPROCS
	// times the wall time.
	TotalS float64 `json:"totalS"`
	// IdleS is /cpu/classes/idle:cpu-seconds over the span: the part of
	// TotalS no goroutine and no runtime task used.
	IdleS float64 `json:"idleS"`
	// Cycles is /gc/cycles/total:gc-cycles over the span: the GC cycles
	// that ended within it.
	Cycles float64 `json:"cycles"`
}

// Sub is g minus an earlier reading.
func (g GCCPU) Sub(earlier GCCPU) GCCPU {
	return GCCPU{GCS: g.GCS - earlier.GCS, TotalS: g.TotalS - earlier.TotalS, IdleS: g.IdleS - earlier.IdleS,
		Cycles: g.Cycles - earlier.Cycles}
}

// Share is the GC's share of the process's CPU capacity over the span,
// gc/total. In a phase that leaves the cores mostly idle (the latency
// scenario) it is small however much of the busy time the GC takes.
func (g GCCPU) Share() float64 {
	if g.TotalS <= 0 {
		return 0
	}
	return g.GCS / g.TotalS
}

// BusyShare is the GC's share of the CPU the process used over the span,
// gc/(total-idle).
func (g GCCPU) BusyShare() float64 {
	if busy := g.TotalS - g.IdleS; busy > 0 {
		return g.GCS / busy
	}
	return 0
}

// GCReply rides beside wire.Reply in an engine's answer to sync and wait
// (both embedded in one JSON object): the GC's CPU over the span the
// answer measured.
type GCReply struct {
	GC *GCCPU `json:"gc,omitempty"`
}
