package informer

import (
	"errors"
	"io"

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
	st := state{streaming: streamUnknown}
	switch mode {
	case ListPaged:
		st.streaming = streamNo
	case ListStreaming:
		st.streaming = streamYes
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

// afterList decides what follows a paginated list.
func afterList(st state, err error, listedRV string, continuing bool) (state, retry) {
	if err == nil {
		// The list is the new truth: watch from its RV.
		st.rv, st.phase, st.fullList, st.synced = listedRV, phaseWatch, false, true
		return st, retryNow
	}
	if watch.IsGone(err) {
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
func afterStreamList(st state, err error) (state, retry) {
	var unsupported *unsupportedStreamError
	switch {
	case errors.As(err, &unsupported) || isRefusal(err):
		// The server does not know sendInitialEvents (it sent something a
		// streaming list never does, or refused the parameters): use
		// paginated lists from now on, from the same RV.
		if st.streaming == streamUnknown {
			st.streaming = streamNo
			st.phase = phaseList
			if st.listRV == "" && !st.synced {
				st.listRV = "0"
			}
			return st, retryNow
		}
		return st, retryBackoff
	case watch.IsGone(err) && st.listRV != "":
		st.listRV, st.listMatch = "", ""
		return st, retryNow
	}
	return st, retryBackoff
}

// isRefusal reports a 4xx answer that says "not like this" about the
// request itself (400, 404, 405, 406, 415, 422): not an auth problem, not
// overload.
func isRefusal(err error) bool {
	se, ok := watch.AsStatus(err)
	if !ok {
		return false
	}
	switch se.Code {
	case 400, 404, 405, 406, 415, 422:
		return true
	}
	return false
}

// afterWatch decides what follows the end of a watch (or of the watch part
// of a streaming list).
func afterWatch(st state, err error) (state, retry) {
	switch {
	case errors.Is(err, io.EOF):
		// The server ended the watch cleanly (our timeoutSeconds, or its
		// own limit): resume from the last RV at once.
		return st, retryNow
	case errors.Is(err, watch.ErrIdleTimeout):
		// No byte for longer than the idle deadline: the connection is
		// presumed dead. Resume from the last RV at once on a new one.
		return st, retryNow
	case watch.IsGone(err):
		// Our RV fell out of the server's history. Relist from that same
		// RV (not ""): the real server answers such a list from its cache
		// without a quorum read, so a thousand clients hitting the same 410
		// do not storm etcd. The jitter spreads them in time too.
		st.listRV, st.listMatch = st.rv, watch.MatchNotOlderThan
		st.phase = st.listPhase()
		return st, retryJitter
	}
	// 429/5xx (with Retry-After), a malformed frame, a network error, 401
	// or 403: keep the RV and watch again after a backoff. The store keeps
	// its last good state meanwhile.
	return st, retryBackoff
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
