package informer

import (
	"context"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// This file owns every resourceVersion decision of the informer: which RV
// to list from, which to watch from, and what an error, a 410 or a bookmark
// does to them. The functions are pure: they take the state and what
// happened, and return the next state and how soon to act on it.

// retry says how soon the next phase may start.
type retry uint8

const (
	retryNow     retry = iota // no wait: a clean end or a success
	retryJitter               // a short random wait, to spread many clients' relists
	retryBackoff              // exponential backoff, or the server's Retry-After if it gave one
)

// initialState is where every informer starts.
func initialState(mode ListMode) state {
	st := state{streaming: streamAuto}
	switch mode {
	case ListPaged:
		st.streaming = streamNo
	case ListStreaming:
		st.streaming = streamOnly
	}
	// The first list asks for RV "0": any state the server has cached is
	// fine for a first sync, and the real server then answers from its
	// watch cache instead of a quorum read of etcd, which is what keeps a
	// fleet of restarting clients from overloading etcd. A streaming list
	// must start from "" (consistent; served from the cache on current
	// servers) because "0" is not a valid start for sendInitialEvents.
	st.listRV = "0"
	st.phase = st.listPhase()
	if st.phase == phaseStreamList {
		st.listRV = ""
	}
	return st
}

// restoredState is where an informer starts whose store was loaded from a
// snapshot at rv: it asks the server whether it has reached rv (a server
// restored to an older state has not) before it watches from it.
func restoredState(mode ListMode, rv string) state {
	st := initialState(mode)
	st.rv, st.phase, st.restored = rv, phaseConfirm, true
	return st
}

// caughtUp reports whether a restored informer has now caught up with the
// state the server had when it confirmed the snapshot's RV, and marks the
// state synced if so. RVs that are not numbers count as caught up at once.
func caughtUp(st state) (state, bool) {
	if !st.restored || st.synced || st.catchUp == "" || behind(st.rv, st.catchUp) {
		return st, false
	}
	st.synced, st.catchUp = true, ""
	return st, true
}

// afterList decides what follows a paginated list.
func afterList(st state, err error, listedRV string, continuing bool) (state, retry) {
	if err == nil {
		// The list is the new truth: watch from its RV.
		st.rv, st.phase, st.fullList, st.synced, st.distrust = listedRV, phaseWatch, false, true, false
		return st, retryNow
	}
	if kube.IsResourceVersionTooLarge(err) {
		// The server is behind the RV we asked for: it was restored to an
		// older state (an etcd restore, a replaced control plane). Only a
		// consistent list of what it has now is the truth. A server that
		// answers this even to a list from "" (its cache lags etcd) gets
		// the backoff, not a loop.
		if st.listRV == "" {
			return st, retryBackoff
		}
		return relistLatest(st), retryJitter
	}
	if kube.IsGone(err) {
		if continuing {
			// The continue token outlived the server's history. Paging
			// again could expire again on a large list, so take the rest
			// in one consistent, unpaginated list: items are decoded one
			// by one, so memory is the same.
			st.listRV, st.listMatch, st.fullList = "", "", true
			return st, retryNow
		}
		// The RV we listed at is compacted away. Only now fall back to
		// "": a consistent read of the latest state. A server that answers
		// 410 even to that is broken; back off rather than spin.
		if st.listRV == "" {
			return st, retryBackoff
		}
		st.listRV, st.listMatch = "", ""
		return st, retryNow
	}
	// 429, 5xx and network errors: same request after a backoff (or the
	// server's Retry-After). 401/403/400 too: the user can fix RBAC or
	// credentials while we wait, and the cache keeps its last good state.
	return st, retryBackoff
}

// afterStreamList decides what follows a streaming list that failed before
// its initial-events-end bookmark. A streaming list that completed
// continues as a watch, and afterWatch handles its end.
//
// In ListAuto every sign that the server does not honour streaming lists
// moves the informer to paginated lists, from the same RV, for the rest of
// its Run, even after streaming lists have worked: a server may honour
// sendInitialEvents from "" and not from an RV, and a paginated list is
// always correct, so an informer is never stuck on a request the server
// answers otherwise. It does not try streaming lists again in that Run: a
// server that answered one with plain watch events cannot be told apart
// from one that will do it again, each try costs a stream whose events are
// thrown away, and the paged lists after a 410 are served from the
// server's cache like the streaming ones. A new Run tries again.
func afterStreamList(st state, end watchEnd) (state, retry) {
	err := end.err
	var unsupported *unsupportedStreamError
	switch {
	case errors.As(err, &unsupported) || isRefusal(err):
		// The server does not honour sendInitialEvents here (it sent
		// something a streaming list never does, or refused the
		// parameters): page, at once.
		if st.streaming == streamAuto {
			return pagedFromNowOn(st), retryNow
		}
		// ListStreaming: the user asked for nothing else.
		return st, retryBackoff
	case kube.IsResourceVersionTooLarge(err):
		// A streaming list from an RV the server has not reached: it
		// answers with an ERROR event carrying 504 ResourceVersionTooLarge
		// (watch-pods-future-rv-streaming.txt). Relist its current state;
		// from "" already, back off instead.
		if st.listRV == "" {
			return st, retryBackoff
		}
		return relistLatest(st), retryJitter
	case kube.IsGone(err) && st.listRV != "":
		st.listRV, st.listMatch = "", ""
		return st, retryNow
	}
	if end.opened && st.streaming == streamAuto {
		// The server accepted the stream and it ended, went silent or
		// broke before the bookmark: one such end can be the network, a
		// second in a row is a server that does not finish streaming lists
		// (a plain watch of a quiet resource sends nothing that names
		// itself). Page after the usual backoff.
		if st.streamFailures++; st.streamFailures >= maxStreamListFailures {
			return pagedFromNowOn(st), retryBackoff
		}
	}
	// A refused connection, 429, 5xx, 401, 403: a paged list would meet
	// the same; try again after the backoff.
	return st, retryBackoff
}

// maxStreamListFailures is how many accepted streaming lists in a row may
// end before their initial-events-end bookmark before ListAuto pages.
const maxStreamListFailures = 2

// pagedFromNowOn switches a ListAuto informer to paginated lists for the
// rest of its Run (see afterStreamList), keeping the RV and match the
// streaming list asked for. A first list from "" becomes one from "0", as
// ListPaged's first list is: served from the server's cache.
func pagedFromNowOn(st state) state {
	st.streaming, st.phase, st.streamFailures = streamNo, phaseList, 0
	if st.listRV == "" && !st.synced {
		st.listRV = "0"
	}
	return st
}

// relistLatest makes the next phase a list of the server's latest state
// (RV "", a consistent read). The commit that follows delivers, as
// deletes with finalStateUnknown, every object the server no longer has,
// and (distrust) an update for every object it kept: a restored server
// reuses resourceVersions, so an equal RV no longer proves equal content.
func relistLatest(st state) state {
	st.listRV, st.listMatch = "", ""
	st.phase = st.listPhase()
	st.distrust = true
	st.confirmFailures = 0
	return st
}

// isRefusal reports a 4xx answer that says "not like this" about the
// request itself (400, 404, 405, 406, 415, 422): not an auth problem, not
// overload.
func isRefusal(err error) bool {
	se, ok := kube.AsStatus(err)
	if !ok {
		return false
	}
	switch se.Code {
	case 400, 404, 405, 406, 415, 422:
		return true
	}
	return false
}

// minHealthyWatch is how long a stream must stay open, when it delivers
// nothing, to count as working: a server that accepts watches and cuts
// them at once must meet the backoff, not a tight loop. client-go's
// reflector draws the same line ("very short watch": under a second with
// no events).
const minHealthyWatch = time.Second

// watchEnd is how a watch (or the watch part of a streaming list) ended.
type watchEnd struct {
	err error
	// opened: the server answered 200 and the stream started.
	opened bool
	// delivered: the stream applied at least one event or bookmark.
	delivered bool
	// lasted is how long the stream was open.
	lasted time.Duration
	// early: the stream ended before the timeoutSeconds we asked for, so
	// the server or the network ended it, not our own deadline.
	early bool
}

// worked reports a stream that connected and made progress or stayed
// open: its end is an interruption, not a failure.
func (e watchEnd) worked() bool {
	return e.delivered || (e.opened && e.lasted >= minHealthyWatch)
}

// afterWatch decides what follows the end of a watch (or of the watch part
// of a streaming list).
//
// Backoff is for attempts that fail to connect, are refused, or end at once
// with nothing: a stream that worked (delivered events, or stayed open for
// minHealthyWatch) and then broke (a cut connection, a restarted server, a
// malformed frame) resumes at once, as client-go's reflector does; a
// server that accepts and cuts every stream before its first event still
// backs off, so there is no tight loop.
//
// A watch that ended early leaves the RV unconfirmed: the server may have
// been restored to an older state, and the real server answers a watch from
// an RV it has not reached with a silent stream (watch-pods-future-rv.txt),
// not an error. phaseConfirm asks it first.
func afterWatch(st state, end watchEnd) (state, retry) {
	err := end.err
	switch {
	case kube.IsGone(err):
		// Our RV fell out of the server's history. Relist from that same
		// RV (not ""): the real server answers such a list from its cache
		// without a quorum read, so a thousand clients hitting the same 410
		// do not storm etcd. The jitter spreads them in time too. A 410
		// again before any watch worked since the last relist is a server
		// that keeps refusing: back off rather than list in a loop.
		r := retryJitter
		if st.relisted && !end.worked() {
			r = retryBackoff
		}
		st.listRV, st.listMatch = st.rv, watch.MatchNotOlderThan
		st.phase = st.listPhase()
		st.relisted = true
		return st, r
	case kube.IsResourceVersionTooLarge(err):
		return relistLatest(st), retryJitter
	}
	if end.worked() {
		st.relisted = false
	}
	if end.early {
		st.phase = phaseConfirm
	}
	switch {
	case errors.Is(err, io.EOF) && !end.early:
		// Our own timeoutSeconds passed: resume from the last RV at once.
		return st, retryNow
	case errors.Is(err, watch.ErrIdleTimeout):
		// No byte for longer than the idle deadline: the connection is
		// presumed dead. Resume at once on a new one; the deadline itself
		// spaces these out.
		return st, retryNow
	case end.worked():
		// The stream worked, then broke: resume at once.
		return st, retryNow
	}
	// Nothing arrived: 429/5xx (with Retry-After), a refused connection, a
	// stream ended or cut before its first event, 401 or 403. Keep the RV
	// and try again after a backoff; the store keeps its last good state.
	return st, retryBackoff
}

// maxConfirmFailures is how many confirmations in a row may time out (the
// answer too slow for the client's deadlines) before the informer stops
// asking and relists from "": a relist is always safe, and an informer must
// never wait for good on a question it cannot get answered. An unreachable
// or overloaded server does not count: the informer keeps asking after a
// backoff, so that a fleet of clients coming back from an outage resumes
// its watches instead of sending etcd a consistent list each.
const maxConfirmFailures = 3

// afterConfirm decides what follows the check of an unconfirmed RV: a
// one-item list at resourceVersion=rv&resourceVersionMatch=NotOlderThan
// that answered serverRV.
func afterConfirm(st state, err error, serverRV string) (state, retry) {
	switch {
	case err == nil && behind(serverRV, st.rv):
		// A server that ignores NotOlderThan answers with an older state:
		// it is behind us all the same.
		return relistLatest(st), retryJitter
	case err == nil:
		// The server has reached our RV: the cache is its state at that
		// RV, and a watch from it misses nothing. A restored store is
		// synced once the watch has brought it to the server's RV.
		st.phase, st.confirmFailures = phaseWatch, 0
		if st.restored && !st.synced {
			st.catchUp = serverRV
			st, _ = caughtUp(st)
		}
		return st, retryNow
	case kube.IsResourceVersionTooLarge(err):
		// The real server waits about 3 s for an RV it has not reached,
		// then answers 504 ResourceVersionTooLarge (list-pods-future-rv.txt):
		// it is behind us, so it was restored to an older state. Jittered:
		// every client of a restored server learns it at once.
		return relistLatest(st), retryJitter
	case kube.IsGone(err), isRefusal(err):
		// A server that refuses the question (an aggregated API without
		// resourceVersionMatch, say) cannot answer it: list instead.
		return relistLatest(st), retryJitter
	}
	if !isTimeout(err) {
		return st, retryBackoff
	}
	if st.confirmFailures++; st.confirmFailures >= maxConfirmFailures {
		return relistLatest(st), retryBackoff
	}
	return st, retryBackoff
}

// isTimeout reports an error from a deadline of the client's: the
// request's own, the idle deadline, or the HTTP client's timeout.
func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, watch.ErrIdleTimeout) ||
		(errors.As(err, &te) && te.Timeout())
}

// behind reports whether the server's RV is below ours, when both are the
// decimal numbers every kube-apiserver sends. resourceVersions are opaque
// to clients in general; one that does not parse proves nothing.
func behind(server, ours string) bool {
	s, err1 := strconv.ParseUint(server, 10, 64)
	o, err2 := strconv.ParseUint(ours, 10, 64)
	return err1 == nil && err2 == nil && s < o
}

// afterBookmark records the RV a bookmark carries: resuming from it after a
// disconnect skips events the informer does not need (those filtered out
// by its selectors) and keeps the RV inside the server's history window.
func afterBookmark(st state, rv string) state {
	if rv != "" {
		st.rv = rv
	}
	return st
}
