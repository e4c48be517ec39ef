package sim

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// listQuery is a validated list request.
type listQuery struct {
	filter   filter
	mode     outputMode
	limit    int
	atRV     uint64 // an exact (or continued) snapshot; 0 = newest
	minRV    uint64 // NotOlderThan: wait for the server to reach it
	start    string // first key (from a continue token)
	token    bool   // continuing a paginated list
	tokenRV  int64  // the token's resourceVersion (-1: newest)
	rawStart string // the token's start key, for a fresh token on 410
}

// parseRV parses a resourceVersion parameter.
func parseRV(s string) (uint64, *StatusError) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, errBadRequest("invalid resourceVersion " + strconv.Quote(s) + ": must be a decimal unsigned integer")
	}
	return v, nil
}

// parseListQuery applies the real server's list-option validation and RV semantics.
func parseListQuery(t target, q url.Values, mode outputMode) (listQuery, *StatusError) {
	lq := listQuery{mode: mode}
	f, serr := parseFilter(t.r, t.ns, q.Get("labelSelector"), q.Get("fieldSelector"))
	if serr != nil {
		return lq, serr
	}
	lq.filter = f
	rv, rvm, cont := q.Get("resourceVersion"), q.Get("resourceVersionMatch"), q.Get("continue")
	switch {
	case rvm != "" && rv == "":
		return lq, errListOptions("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided")
	case rvm != "" && cont != "":
		return lq, errListOptions("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided")
	case rvm == "Exact" && rv == "0":
		return lq, errListOptions("resourceVersionMatch", `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`)
	case rvm != "" && rvm != "Exact" && rvm != "NotOlderThan":
		return lq, errBadRequest("unknown resourceVersionMatch " + strconv.Quote(rvm) + ": want Exact or NotOlderThan")
	case q.Get("sendInitialEvents") != "":
		return lq, errListOptions("sendInitialEvents", "sendInitialEvents is forbidden for list")
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.ParseInt(l, 10, 64)
		if err != nil || n < 0 {
			return lq, errBadRequest("invalid limit " + strconv.Quote(l) + ": must be a non-negative integer")
		}
		if n > 1<<31 {
			n = 1 << 31
		}
		lq.limit = int(n)
	}
	if cont != "" {
		tokRV, start, err := decodeContinue(t, cont)
		if err != nil {
			return lq, errBadRequest(err.Error())
		}
		lq.token, lq.tokenRV, lq.start, lq.rawStart = true, tokRV, start, start
		if tokRV > 0 {
			lq.atRV = uint64(tokRV)
		}
		return lq, nil
	}
	switch {
	case rv == "":
	case rv == "0":
		lq.limit = 0 // served from the watch cache: the real server ignores limit
	default:
		n, serr := parseRV(rv)
		if serr != nil {
			return lq, serr
		}
		lq.minRV = n
		if rvm == "Exact" {
			lq.atRV = n
		}
	}
	return lq, nil
}

func (s *Server) serveList(w http.ResponseWriter, r *http.Request, t target) {
	mode, ok := negotiate(r.Header.Get("Accept"), false)
	if !ok {
		writeStatus(w, errNotAcceptable())
		return
	}
	lq, serr := parseListQuery(t, r.URL.Query(), mode)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	if s.applyRequestFaults(w, r, t.r, verbList) {
		return
	}
	if lq.minRV > 0 {
		if serr := s.waitForRV(r.Context(), lq.minRV, nil); serr != nil {
			writeStatus(w, serr)
			return
		}
	}
	res, serr := s.list(t, &lq)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	s.writeList(w, r, t, &lq, res)
}

// waitForRV waits up to Options.TooLargeWait for the server to reach rv.
// A closed restart (a watch's: see DropWatches) ends the wait with
// errRestarted; a nil one never does.
func (s *Server) waitForRV(ctx context.Context, rv uint64, restart <-chan struct{}) *StatusError {
	timer := time.NewTimer(s.opts.TooLargeWait)
	defer timer.Stop()
	for {
		s.store.mu.RLock()
		cur, wait := s.store.rv, s.store.notify
		s.store.mu.RUnlock()
		if cur >= rv {
			return nil
		}
		select {
		case <-wait:
		case <-timer.C:
			return errTooLargeRV(rv, cur)
		case <-ctx.Done():
			return errTooLargeRV(rv, cur)
		case <-s.stopped():
			return errTooLargeRV(rv, cur)
		case <-restart:
			return errRestarted
		}
	}
}

// errRestarted ends a wait that a restart (DropWatches) cut short: the
// watch ends cleanly, with no Status.
var errRestarted = &StatusError{Status: Status{Reason: "restarted", Message: "the server restarted"}}

// list takes the page under the store lock, checking the snapshot is still retained.
func (s *Server) list(t target, lq *listQuery) (listResult, *StatusError) {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	if lq.atRV > st.rv {
		if lq.token {
			return listResult{}, errBadRequest("continue key is not valid: resourceVersion is ahead of the server")
		}
		return listResult{}, errTooLargeRV(lq.atRV, st.rv)
	}
	if lq.atRV > 0 && lq.atRV < st.floorLocked() || (lq.token && lq.tokenRV > 0 && uint64(lq.tokenRV) < st.tokenFloor) {
		if lq.token {
			e := errGone(msgContinueTooOld)
			e.Status.Metadata.Continue = restartToken(t, lq.rawStart)
			return listResult{}, e
		}
		return listResult{}, errGone(msgListTooOld)
	}
	spec := listSpec{r: t.r, start: lq.start, limit: lq.limit, atRV: lq.atRV, count: lq.filter.empty()}
	if t.ns != "" {
		spec.prefix = t.ns + "/"
	}
	if !lq.filter.empty() {
		f := lq.filter
		spec.match = f.matches
	}
	return st.listLocked(spec), nil
}

// listKind returns the kind and apiVersion of a list in the given mode.
func listKind(r *resource, mode outputMode) (kind, apiVersion string) {
	if mode == modeMeta {
		return "PartialObjectMetadataList", "meta.k8s.io/v1"
	}
	return r.info.Kind + "List", r.info.apiVersion()
}

// writeList streams a list response; objects are written from their stored bytes.
func (s *Server) writeList(w http.ResponseWriter, r *http.Request, t target, lq *listQuery, res listResult) {
	rvStr := strconv.FormatUint(res.rv, 10)
	cont := ""
	if res.more() {
		tokRV := int64(res.rv)
		if lq.token && lq.tokenRV == -1 {
			tokRV = -1
		}
		cont = encodeContinue(t, tokRV, res.items[len(res.items)-1].key)
	}
	fw := s.responseWriter(w, r, t.r, verbList)
	defer fw.flush()
	w.Header().Set("Content-Type", contentType(lq.mode, true))
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	if lq.mode == modeTable {
		fw.writeAll(s.appendTable(nil, t.r, res.items, tableOpts{rv: rvStr, include: r.URL.Query().Get("includeObject"),
			cont: cont, remaining: res.remaining, columns: true}))
		return
	}
	bw := bufio.NewWriterSize(fw, 32<<10)
	kind, apiVersion := listKind(t.r, lq.mode)
	b := make([]byte, 0, 256)
	b = append(b, `{"kind":"`...)
	b = append(b, kind...)
	b = append(b, `","apiVersion":"`...)
	b = append(b, apiVersion...)
	b = appendListMeta(b, rvStr, cont, res.remaining)
	b = append(b, `,"items":[`...)
	_, _ = bw.Write(b)
	var scratch []byte
	for i, o := range res.items {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		if lq.mode == modeMeta {
			scratch = appendPartial(scratch[:0], o)
			_, _ = bw.Write(scratch)
		} else {
			_, _ = bw.Write(o.raw)
		}
	}
	_, _ = bw.WriteString("]}")
	_ = bw.Flush()
}

// more reports whether another page follows.
func (res *listResult) more() bool { return res.next != "" && len(res.items) > 0 }

// appendListMeta writes `,"metadata":{...}` of a list.
func appendListMeta(b []byte, rv, cont string, remaining int64) []byte {
	b = append(b, `","metadata":{"resourceVersion":"`...)
	b = append(b, rv...)
	b = append(b, '"')
	if cont != "" {
		b = append(b, `,"continue":"`...)
		b = append(b, cont...)
		b = append(b, '"')
		if remaining >= 0 {
			b = append(b, `,"remainingItemCount":`...)
			b = strconv.AppendInt(b, remaining, 10)
		}
	}
	return append(b, '}')
}

// appendPartial writes o as a PartialObjectMetadata.
func appendPartial(b []byte, o *object) []byte {
	b = append(b, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":`...)
	b = append(b, o.meta()...)
	return append(b, '}')
}

func (o *object) rvString() string { return strconv.FormatUint(o.rv, 10) }

func itoa(n int) string { return strconv.Itoa(n) }
