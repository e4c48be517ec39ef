package sim

import (
	"bufio"
	"math/rand/v2"
	"net/http"
	"strconv"
)

// evType is a watch event type as sent on the wire.
type evType uint8

const (
	evTypeAdded evType = iota
	evTypeModified
	evTypeDeleted
	evTypeBookmark
	evTypeError
)

// framePrefix is what precedes the object in each event frame; the frame ends "}\n".
var framePrefix = [...]string{
	evTypeAdded:    `{"type":"ADDED","object":`,
	evTypeModified: `{"type":"MODIFIED","object":`,
	evTypeDeleted:  `{"type":"DELETED","object":`,
	evTypeBookmark: `{"type":"BOOKMARK","object":`,
	evTypeError:    `{"type":"ERROR","object":`,
}

// watchStream writes one watch response: one frame per event, flushed at once (one
// HTTP/1.1 chunk or HTTP/2 DATA frame each, as the real server does), with the
// stream's injected faults applied.
type watchStream struct {
	s     *Server
	w     http.ResponseWriter
	r     *http.Request
	t     target
	q     *watchQuery
	out   *faultWriter
	fault *Fault // drop, cut or stall after AfterEvents events; nil = none
	fired bool   // fault has been applied
	sent  int    // events written
	frame []byte // reused frame buffer
	table bool   // Table column definitions already sent
}

func (s *Server) newWatchStream(w http.ResponseWriter, r *http.Request, t target, q *watchQuery) *watchStream {
	return &watchStream{s: s, w: w, r: r, t: t, q: q,
		out:   s.responseWriter(w, r, t.r, verbWatch),
		fault: s.faults.take(t.r, verbWatch, FaultDropWatch, FaultCutWatch, FaultStall),
		frame: make([]byte, 0, 8<<10)}
}

// start sends the 200 headers. A drop or stall fault with AfterEvents 0 fires here;
// false means the stream is over.
func (ws *watchStream) start() bool {
	h := ws.w.Header()
	h.Set("Content-Type", contentType(ws.q.mode, false))
	h.Set("Cache-Control", "no-cache, private")
	ws.w.WriteHeader(http.StatusOK)
	ws.out.flush()
	if ws.endDue() {
		return ws.fire()
	}
	return true
}

// endDue reports whether a drop or stall fault is due: AfterEvents events sent.
func (ws *watchStream) endDue() bool {
	return ws.fault != nil && ws.fault.Type != FaultCutWatch && ws.sent >= ws.fault.AfterEvents
}

// send writes one event; false means the stream is over. Events are
// buffered: the caller flushes once it has no further event at hand.
func (ws *watchStream) send(typ evType, o *object) bool {
	if ws.endDue() && !ws.fire() {
		return false
	}
	b := append(ws.frame[:0], framePrefix[typ]...)
	switch ws.q.mode {
	case modeMeta:
		b = appendPartial(b, o)
	case modeTable:
		b = ws.s.appendTable(b, ws.t.r, []*object{o}, tableOpts{rv: o.rvString(), include: ws.q.include,
			remaining: -1, columns: !ws.table})
		ws.table = true
	default:
		b = append(b, o.raw...)
	}
	b = append(b, '}', '\n')
	ws.frame = b
	return ws.emit(b)
}

// emit writes a complete frame, applying a cut fault that is due.
func (ws *watchStream) emit(b []byte) bool {
	if ws.fault != nil && ws.fault.Type == FaultCutWatch && ws.sent >= ws.fault.AfterEvents {
		if !ws.s.faults.apply(ws.fault) {
			ws.fault = nil // cleared since the watch took it
		} else {
			ws.fired = true
			ws.out.writeAll(b[:len(b)/2])
			ws.out.flush()
			panic(http.ErrAbortHandler) // abort: no final zero chunk (RST_STREAM on HTTP/2)
		}
	}
	if !ws.out.writeAll(b) {
		return false
	}
	ws.sent++
	if ws.endDue() {
		return ws.fire()
	}
	return true
}

// fire applies a due drop or stall fault (a due cut happens in emit) and returns
// false: the stream is over. If ClearFaults has voided the fault since the watch
// took it, the stream goes on without it and fire returns true.
func (ws *watchStream) fire() bool {
	if !ws.s.faults.apply(ws.fault) {
		ws.fault = nil
		return true
	}
	ws.fired = true
	ws.out.flush() // the events before the fault reach the client
	if ws.fault.Type == FaultStall {
		ws.s.stall(ws.r)
	}
	return false
}

// giveBackIfRestarted returns the stream's faults to the queue when the stream
// ends before they fired and a restart (DropWatches) came since the watch
// arrived: the restart ended a watch that had just taken them, and they are
// meant for the next watch, which the client opens after the restart. Without
// this a test that queues a fault and then restarts the server loses the fault
// whenever the client's watch arrives between the two. That holds for the
// drop, cut and stall fault the stream took and for a split-writes fault its
// body took and never split a byte of.
func (ws *watchStream) giveBackIfRestarted(restart <-chan struct{}) {
	if !closed(restart) {
		return
	}
	if ws.fault != nil && !ws.fired {
		ws.s.faults.giveBack(ws.fault)
	}
	if out := ws.out; out.fault != nil && !out.fired {
		ws.s.faults.giveBack(out.fault)
	}
}

// bookmark sends a BOOKMARK at rv; initEnd adds the initial-events-end annotation.
func (ws *watchStream) bookmark(rv uint64, initEnd bool) bool {
	if ws.endDue() && !ws.fire() {
		return false
	}
	b := append(ws.frame[:0], framePrefix[evTypeBookmark]...)
	if ws.q.mode == modeTable { // a one-row Table, as every object of this watch
		b = ws.s.appendBookmarkTable(b, ws.t.r, rv, initEnd, !ws.table)
		ws.table = true
		b = append(b, '}', '\n')
		ws.frame = b
		return ws.emit(b)
	}
	if ws.q.mode == modeMeta {
		b = append(b, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"`...)
	} else {
		b = append(b, ws.t.r.bookmark[0]...)
	}
	b = strconv.AppendUint(b, rv, 10)
	if initEnd {
		b = append(b, `","annotations":{"k8s.io/initial-events-end":"true"}}`...)
	} else {
		b = append(b, `"}`...)
	}
	if ws.q.mode == modeMeta {
		b = append(b, '}')
	} else {
		b = append(b, ws.t.r.bookmark[1]...)
	}
	b = append(b, '}', '\n')
	ws.frame = b
	return ws.emit(b)
}

// writeStatusEvent sends an ERROR event carrying a Status, ending the stream.
func (ws *watchStream) writeStatusEvent(e *StatusError) {
	body, _ := json.Marshal(&e.Status)
	b := append(ws.frame[:0], framePrefix[evTypeError]...)
	b = append(b, body...)
	b = append(b, '}', '\n')
	ws.out.writeAll(b)
	ws.out.flush()
}

// faultWriter writes a response body, optionally in random small pieces each flushed
// on its own (the split-writes fault), so clients see frames cut at any byte.
type faultWriter struct {
	w       http.ResponseWriter
	flusher http.Flusher
	split   *rand.Rand    // nil = write whole
	fault   *Fault        // the split-writes fault, while split
	faults  *faultState   // where fault is counted and cleared
	fired   bool          // fault has been counted
	buf     *bufio.Writer // gathers whole frames between flushes; nil with split
	failed  bool          // a write failed: the client is gone
}

// watchWriteBuffer gathers a burst of events into large writes, as the real
// server's watch does by flushing only when no further event is queued.
const watchWriteBuffer = 64 << 10

func (fw *faultWriter) Write(p []byte) (int, error) {
	if fw.split == nil {
		n, err := fw.buf.Write(p)
		if err != nil {
			fw.failed = true
		}
		return n, err
	}
	if len(p) > 0 && !fw.splitLive() {
		// Cleared: from now on the body is written whole.
		fw.split, fw.fault = nil, nil
		fw.buf = bufio.NewWriterSize(fw.w, watchWriteBuffer)
		return fw.Write(p)
	}
	for off := 0; off < len(p); {
		n := 1 + fw.split.IntN(64)
		if off+n > len(p) {
			n = len(p) - off
		}
		if _, err := fw.w.Write(p[off : off+n]); err != nil {
			fw.failed = true
			return off, err
		}
		fw.flush()
		off += n
	}
	return len(p), nil
}

// splitLive counts the split-writes fault at the first byte it splits, and
// reports whether it still applies (ClearFaults has not voided it).
func (fw *faultWriter) splitLive() bool {
	if !fw.fired {
		fw.fired = fw.faults.apply(fw.fault)
		return fw.fired
	}
	return fw.faults.live(fw.fault)
}

func (fw *faultWriter) writeAll(b []byte) bool {
	_, err := fw.Write(b)
	return err == nil
}

// flush sends what is buffered to the client now.
func (fw *faultWriter) flush() {
	if fw.failed {
		return
	}
	if fw.buf != nil && fw.buf.Flush() != nil {
		fw.failed = true
		return
	}
	if fw.flusher != nil {
		fw.flusher.Flush()
	}
}

// responseWriter wraps w with the split-writes fault when one applies to this request.
func (s *Server) responseWriter(w http.ResponseWriter, r *http.Request, res *resource, v verb) *faultWriter {
	fw := &faultWriter{w: w}
	fw.flusher, _ = w.(http.Flusher)
	if f := s.faults.take(res, v, FaultSplitWrites); f != nil {
		fw.split, fw.fault, fw.faults = s.faults.newRand(), f, &s.faults
	} else {
		fw.buf = bufio.NewWriterSize(w, watchWriteBuffer)
	}
	return fw
}
