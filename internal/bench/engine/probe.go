package engine

import (
	"context"
	"runtime"
	"runtime/trace"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/kwatch/kwatch/internal/bench/report"
	"github.com/kwatch/kwatch/internal/bench/wire"
)

// probe is what every engine's handler calls. It is engine-neutral: both
// engines pay the same few map lookups per delivery. Handler calls are
// sequential (each engine delivers to a handler from one goroutine at a
// time), so a phase's non-atomic fields are written by one goroutine and
// read by the waiter only after done is closed.
type probe struct {
	adds     atomic.Int64
	lastCall atomic.Int64 // Unix ns of the newest handler call
	cur      atomic.Pointer[phase]
	// gcAfter, when positive, is the stamped delivery of a latency phase
	// that starts a garbage collection.
	gcAfter int
}

// phase is one armed measurement.
type phase struct {
	name   string
	id     string
	stamps bool // collect latencies from StampKey
	keep   bool // stay armed after the marker (relist: wait for the burst)

	calls     atomic.Int64
	firstNS   int64         // handler goroutine; read after done
	firstCPU  time.Duration // handler goroutine; read after done
	firstGC   report.GCCPU  // handler goroutine; read after done
	doneNS    int64
	doneCPU   time.Duration
	doneGC    report.GCCPU
	latencyUS []int32
	done      chan struct{} // closed by the handler call that saw the marker

	// wireID is id as protobuf encodes a short string value (its length,
	// then its bytes), and marker the annotations that name it: what
	// EngineWireLimit looks for in a frame and passes on when found.
	wireID []byte
	marker map[string]string
}

func newPhase(name, id string) *phase {
	ph := &phase{name: name, id: id, done: make(chan struct{}),
		wireID: append([]byte{byte(len(id))}, id...), marker: map[string]string{wire.DoneKey: id}}
	switch name {
	case wire.PhaseLatency:
		ph.stamps = true
		ph.latencyUS = make([]int32, 0, 1<<15)
	case wire.PhaseRelist:
		ph.keep = true
	}
	return ph
}

func (p *probe) add() {
	p.adds.Add(1)
	p.lastCall.Store(time.Now().UnixNano())
}

// update is called for every modified object with its annotations.
func (p *probe) update(ann map[string]string) {
	now := time.Now().UnixNano()
	p.lastCall.Store(now)
	ph := p.cur.Load()
	if ph == nil {
		return
	}
	if ph.calls.Add(1) == 1 {
		ph.firstNS, ph.firstCPU, ph.firstGC = now, cpuTime(), readGCCPU()
	}
	if ph.stamps {
		if s, ok := ann[wire.StampKey]; ok {
			if t, err := strconv.ParseInt(s, 10, 64); err == nil {
				us := int32(min((now-t)/1e3, 1<<31-1))
				ph.latencyUS = append(ph.latencyUS, us)
				if len(ph.latencyUS) == p.gcAfter {
					mark("latency: forced GC after %d deliveries", p.gcAfter)
					go runtime.GC()
				}
				if trace.IsEnabled() {
					// A runtime trace of the phase shows every delivery's
					// latency at the time it was made.
					trace.Log(context.Background(), "latency-us", strconv.Itoa(int(us)))
				}
			}
		}
	}
	if ann[wire.DoneKey] == ph.id && ph.doneNS == 0 {
		ph.doneNS, ph.doneCPU, ph.doneGC = now, cpuTime(), readGCCPU()
		if !ph.keep {
			p.cur.Store(nil)
		}
		close(ph.done)
	}
}
