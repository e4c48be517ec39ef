package engine

import (
	"maps"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/internal/bench/wire"
)

// markerHold passes a kwatch handler's deliveries to the probe, holding
// back the armed phase's marker until the handler's queue is empty.
//
// A kwatch handler's changes coalesce: a key with a change pending keeps
// its place in the queue when it changes again. In the throughput
// scenario, whose writes go round the pods more than once, the marker's
// key was queued in the first round, so the marker can be delivered while
// keys written before it wait behind it; ending the phase there would
// count events the consumer has not been given, and leave them queued in
// front of the next phase's. That happens whenever the handler is slower
// than the watch: a compact store's handler decodes on delivery. Once the
// marker has been seen, every event before it has been applied, so an
// empty queue means the consumer has been given every change of the phase:
// the probe gets the marker then, in the call that emptied the queue
// (Backlog excludes the change being delivered). Handler calls are
// sequential, so held needs no lock.
type markerHold struct {
	reg informer.Registration
	// held is the phase whose marker update holds back, or nil.
	held *phase
}

func (h *markerHold) update(p *probe, ann map[string]string) {
	ph := p.cur.Load()
	if ph != nil && h.held != ph && ann[wire.DoneKey] == ph.id && h.reg.Backlog() > 0 {
		h.held = ph
		ann = maps.Clone(ann)
		delete(ann, wire.DoneKey)
	}
	p.update(ann)
	if h.held != nil && h.reg.Backlog() == 0 {
		if h.held == p.cur.Load() {
			// The marker alone: its stamp, if any, was counted above.
			p.update(map[string]string{wire.DoneKey: h.held.id})
		}
		h.held = nil
	}
}
