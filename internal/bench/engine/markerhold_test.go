package engine

import (
	"strconv"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/bench/wire"
)

// backlog is a Registration whose Backlog the test sets.
type backlog struct{ n int }

func (b *backlog) HasSynced() bool { return true }
func (b *backlog) Backlog() int    { return b.n }
func (b *backlog) Merged() uint64  { return 0 }
func (b *backlog) Remove()         {}

func TestMarkerWaitsForTheQueue(t *testing.T) {
	p, q := &probe{}, &backlog{}
	e := &markerHold{reg: q}
	ph := newPhase(wire.PhaseLatency, "lat-1")
	p.cur.Store(ph)
	stamp := strconv.FormatInt(time.Now().UnixNano(), 10)
	q.n = 2 // two keys wait behind the marker's
	e.update(p, map[string]string{wire.StampKey: stamp, wire.DoneKey: "lat-1"})
	q.n = 1
	e.update(p, map[string]string{wire.StampKey: stamp})
	select {
	case <-ph.done:
		t.Fatal("done with keys still queued")
	default:
	}
	q.n = 0
	e.update(p, map[string]string{wire.StampKey: stamp})
	<-ph.done
	if got := len(ph.latencyUS); got != 3 {
		t.Errorf("samples = %d, want 3 (the marker's stamp once)", got)
	}
	if e.held != nil {
		t.Error("marker still held after the phase ended")
	}

	// With nothing queued behind it, the marker ends the phase at once.
	ph = newPhase(wire.PhaseThroughput, "t-1")
	p.cur.Store(ph)
	e.update(p, map[string]string{wire.DoneKey: "t-1"})
	<-ph.done
	if got := ph.calls.Load(); got != 1 {
		t.Errorf("calls = %d, want 1", got)
	}
}
