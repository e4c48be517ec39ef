package engine

import (
	"strconv"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/bench/wire"
)

func TestProbeLatencyPhase(t *testing.T) {
	p := &probe{}
	p.update(map[string]string{wire.StampKey: "1"}) // not armed: ignored
	ph := newPhase(wire.PhaseLatency, "lat-1")
	p.cur.Store(ph)
	stamp := time.Now().Add(-2 * time.Millisecond).UnixNano()
	p.update(map[string]string{wire.StampKey: strconv.FormatInt(stamp, 10)})
	p.update(map[string]string{wire.StampKey: "garbage"})
	p.update(map[string]string{wire.DoneKey: "lat-0"}) // another phase's marker
	select {
	case <-ph.done:
		t.Fatal("done before the phase's own marker")
	default:
	}
	p.update(map[string]string{wire.StampKey: strconv.FormatInt(stamp, 10), wire.DoneKey: "lat-1"})
	<-ph.done
	if got, want := ph.calls.Load(), int64(4); got != want {
		t.Errorf("calls = %d, want %d", got, want)
	}
	if got := len(ph.latencyUS); got != 2 {
		t.Fatalf("samples = %d, want 2", got)
	}
	if l := ph.latencyUS[0]; l < 2000 || l > 2_000_000 {
		t.Errorf("latency = %d µs, want about 2000", l)
	}
	if p.cur.Load() != nil {
		t.Error("latency phase still armed after its marker")
	}
}

func TestProbeRelistPhaseStaysArmed(t *testing.T) {
	p := &probe{}
	ph := newPhase(wire.PhaseRelist, "r-1")
	p.cur.Store(ph)
	p.update(map[string]string{wire.DoneKey: "r-1"})
	p.update(nil)
	<-ph.done
	if p.cur.Load() != ph {
		t.Error("relist phase disarmed at its marker; it must count the rest of the burst")
	}
	if got := ph.calls.Load(); got != 2 {
		t.Errorf("calls = %d, want 2", got)
	}
}
