package informer

import (
	"log/slog"
	"sync"
	"sync/atomic"
)

// maxHeldLogs is the most records heldLogs keeps between two releases of
// distMu; past it they are counted, and their number logged.
const maxHeldLogs = 64

// heldLogs keeps what the informer logs while distMu is held (a refused
// object, a stored version that does not decode for an Indexer or Key),
// for the Logger once distMu is released: the Logger's handler is the
// user's code, and a holder of one of its locks may be waiting for distMu
// (a metrics scrape reading Stats, say). Its own mutex is a leaf: nothing
// is called while it is held.
type heldLogs struct {
	pending atomic.Bool // something is kept: flush, called after every event, looks here first
	mu      sync.Mutex
	recs    []heldLog
	dropped int
}

type heldLog struct {
	msg  string
	args []any
}

// add keeps one error record.
func (h *heldLogs) add(msg string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pending.Store(true)
	if len(h.recs) == maxHeldLogs {
		h.dropped++
		return
	}
	h.recs = append(h.recs, heldLog{msg, args})
}

// flush logs the records kept, in their order, to l. The caller holds no
// lock of the informer's.
func (h *heldLogs) flush(l *slog.Logger, resource string) {
	if !h.pending.Load() {
		return
	}
	h.mu.Lock()
	recs, dropped := h.recs, h.dropped
	h.recs, h.dropped = nil, 0
	h.pending.Store(false)
	h.mu.Unlock()
	for _, r := range recs {
		l.Error(r.msg, r.args...)
	}
	if dropped > 0 {
		l.Error("informer logged more errors than it keeps between two changes; Stats counts them all",
			"resource", resource, "notLogged", dropped)
	}
}
