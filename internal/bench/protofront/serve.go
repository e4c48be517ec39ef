package protofront

import (
	"bufio"
	"net/http"
	"sort"
	"strconv"
	"time"
)

const (
	podsPath      = "/api/v1/pods"
	contentType   = "application/vnd.kubernetes.protobuf"
	batchFrames   = 1024     // frames copied out of the ring per lock
	writeBufBytes = 64 << 10 // response buffer
)

// Handler serves GET /api/v1/pods (list and watch) in protobuf.
func (f *Front) Handler() http.Handler { return http.HandlerFunc(f.serveHTTP) }

func (f *Front) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != podsPath {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet {
		http.Error(w, "only GET is served", http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	if v := q.Get("watch"); v == "1" || v == "true" {
		f.serveWatch(w, r)
		return
	}
	f.serveList(w, r)
}

// snapshotLocked returns the pod messages from list position start, at most
// limit of them (all when limit <= 0), and whether more follow.
func (f *Front) snapshotLocked(start, limit int) (items [][]byte, more bool) {
	end := len(f.keys)
	if limit > 0 && start+limit < end {
		end, more = start+limit, true
	}
	items = make([][]byte, 0, max(end-start, 0))
	for _, k := range f.keys[min(start, end):end] {
		items = append(items, f.pods[k])
	}
	return items, more
}

func (f *Front) serveList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	if q.Get("resourceVersion") == "0" {
		limit = 0 // as the real server's watch cache does
	}
	f.mu.Lock()
	start := 0
	if tok := q.Get("continue"); tok != "" {
		start = sort.SearchStrings(f.keys, tok) + 1
	}
	rv := f.rv
	items, more := f.snapshotLocked(start, limit)
	token := ""
	if more {
		token = f.keys[start+len(items)-1]
	}
	f.mu.Unlock()

	n := listMetaLen(rv, token) + 1 + varintLen(uint64(listMetaLen(rv, token)))
	for _, it := range items {
		n += fieldLen(len(it))
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Length", strconv.Itoa(envelopeLen("PodList", n)))
	bw := bufio.NewWriterSize(w, writeBufBytes)
	b := appendEnvelopeHeader(make([]byte, 0, 256), "PodList", n)
	b = appendListMeta(b, rv, token)
	bw.Write(b)
	for _, it := range items {
		bw.Write(appendFieldHeader(b[:0], 2, len(it)))
		bw.Write(it)
	}
	bw.Write(appendEnvelopeTail(b[:0]))
	bw.Flush()
}

// watchStart is where a watch begins, decided under the lock.
type watchStart struct {
	initial [][]byte // pods to send as ADDED first
	cursor  uint64   // the last RV the client has (or will have) seen
	tooOld  bool
	restart chan struct{}
}

func (f *Front) startWatch(r *http.Request) (watchStart, bool) {
	q := r.URL.Query()
	rv, sie := q.Get("resourceVersion"), q.Get("sendInitialEvents") == "true"
	f.mu.Lock()
	defer f.mu.Unlock()
	ws := watchStart{restart: f.restart, cursor: f.rv}
	if sie || rv == "" || rv == "0" {
		ws.initial, _ = f.snapshotLocked(0, 0)
		return ws, true
	}
	from, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return ws, false
	}
	ws.cursor, ws.tooOld = from, from < f.floor
	return ws, true
}

func (f *Front) serveWatch(w http.ResponseWriter, r *http.Request) {
	ws, ok := f.startWatch(r)
	if !ok {
		http.Error(w, "bad resourceVersion", http.StatusBadRequest)
		return
	}
	f.watchers.Add(1)
	defer f.watchers.Add(-1)
	w.Header().Set("Content-Type", contentType+";stream=watch")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	bw := bufio.NewWriterSize(w, writeBufBytes)
	var frame []byte
	if ws.tooOld {
		st, _ := expired(ws.cursor)
		bw.Write(appendFrame(frame, "ERROR", "Status", st))
		bw.Flush()
		return
	}
	for _, it := range ws.initial {
		frame = appendFrame(frame[:0], "ADDED", "Pod", it)
		bw.Write(frame)
	}
	if r.URL.Query().Get("sendInitialEvents") == "true" {
		bm, _ := initialEventsEnd(ws.cursor)
		bw.Write(appendFrame(frame[:0], "BOOKMARK", "Pod", bm))
	}
	ws.initial = nil
	if bw.Flush() != nil || rc.Flush() != nil {
		return
	}
	f.stream(r, bw, rc, ws)
}

// stream sends every event after ws.cursor until the client goes away, the
// watch times out or is dropped, or the client falls out of the history.
func (f *Front) stream(r *http.Request, bw *bufio.Writer, rc *http.ResponseController, ws watchStart) {
	timeout := make(<-chan time.Time)
	if ts, err := strconv.Atoi(r.URL.Query().Get("timeoutSeconds")); err == nil && ts > 0 {
		t := time.NewTimer(time.Duration(ts) * time.Second)
		defer t.Stop()
		timeout = t.C
	}
	frames := make([][]byte, 0, batchFrames)
	for {
		f.mu.Lock()
		behind := ws.cursor+1 < f.hist.next-uint64(f.hist.n)
		frames = f.hist.after(frames[:0], ws.cursor, batchFrames)
		notify := f.notify
		f.mu.Unlock()
		select {
		case <-ws.restart:
			return
		default:
		}
		if behind {
			return
		}
		for _, fr := range frames {
			bw.Write(fr)
		}
		ws.cursor += uint64(len(frames))
		if len(frames) > 0 {
			if bw.Flush() != nil || rc.Flush() != nil {
				return
			}
			continue
		}
		select {
		case <-notify:
		case <-ws.restart:
			return
		case <-r.Context().Done():
			return
		case <-timeout:
			return
		}
	}
}
