package informer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

func status(code int32, reason string) error {
	return &kube.OpError{Op: "x", Err: &kube.StatusError{Code: code, Reason: reason}}
}

func TestInitialState(t *testing.T) {
	tests := []struct {
		mode      ListMode
		wantPhase phase
		wantRV    string
	}{
		{ListAuto, phaseStreamList, ""},
		{ListStreaming, phaseStreamList, ""},
		{ListPaged, phaseList, "0"},
	}
	for _, tt := range tests {
		st := initialState(tt.mode)
		if st.phase != tt.wantPhase || st.listRV != tt.wantRV {
			t.Errorf("mode %d: got phase %v listRV %q, want %v %q", tt.mode, st.phase, st.listRV, tt.wantPhase, tt.wantRV)
		}
	}
}

func TestAfterList(t *testing.T) {
	base := state{phase: phaseList, listRV: "0", streaming: streamNo}
	tests := []struct {
		name       string
		st         state
		err        error
		continuing bool
		want       state
		wantRetry  retry
	}{
		{"success watches from the list RV", base, nil, false,
			state{phase: phaseWatch, rv: "42", listRV: "0", streaming: streamNo, synced: true}, retryNow},
		{"410 on the list falls back to RV empty", base, status(410, "Expired"), false,
			state{phase: phaseList, listRV: "", streaming: streamNo}, retryNow},
		{"410 at RV empty backs off instead of spinning", state{phase: phaseList, streaming: streamNo}, status(410, "Gone"), false,
			state{phase: phaseList, streaming: streamNo}, retryBackoff},
		{"expired continue takes one full list", base, status(410, "Expired"), true,
			state{phase: phaseList, listRV: "", fullList: true, streaming: streamNo}, retryNow},
		{"504 too large falls back to RV empty", state{phase: phaseList, listRV: "7", listMatch: watch.MatchNotOlderThan, streaming: streamNo}, tooLarge(), false,
			state{phase: phaseList, streaming: streamNo, distrust: true}, retryJitter},
		{"504 too large at RV empty backs off instead of spinning", state{phase: phaseList, streaming: streamNo}, tooLarge(), false,
			state{phase: phaseList, streaming: streamNo}, retryBackoff},
		{"success clears distrust", state{phase: phaseList, streaming: streamNo, distrust: true}, nil, false,
			state{phase: phaseWatch, rv: "42", streaming: streamNo, synced: true}, retryNow},
		{"429 keeps the RV", base, status(429, "TooManyRequests"), false, base, retryBackoff},
		{"503 keeps the RV", base, status(503, "ServiceUnavailable"), false, base, retryBackoff},
		{"network error keeps the RV", base, &net.OpError{Op: "dial", Err: errors.New("refused")}, false, base, retryBackoff},
		{"403 keeps the state", base, status(403, "Forbidden"), false, base, retryBackoff},
	}
	for _, tt := range tests {
		got, r := afterList(tt.st, tt.err, "42", tt.continuing)
		if got != tt.want || r != tt.wantRetry {
			t.Errorf("%s:\n got %+v retry %d\nwant %+v retry %d", tt.name, got, r, tt.want, tt.wantRetry)
		}
	}
}

func tooLarge() error {
	return &kube.OpError{Op: "list", Err: &kube.StatusError{Code: 504, Reason: "Timeout",
		Message: "Timeout: Too large resource version: 100250, current: 250", Causes: []kube.StatusCause{{Type: "ResourceVersionTooLarge", Message: "Too large resource version"}}}}
}

func TestAfterWatch(t *testing.T) {
	watching := state{phase: phaseWatch, rv: "100", listRV: "0", synced: true, streaming: streamNo}
	streamingWatch := watching
	streamingWatch.streaming = streamOnly
	confirming := watching
	confirming.phase = phaseConfirm
	latest := state{phase: phaseList, rv: "100", synced: true, streaming: streamNo, distrust: true}
	relisting := state{phase: phaseList, rv: "100", listRV: "100", listMatch: watch.MatchNotOlderThan, synced: true, streaming: streamNo, relisted: true}
	relisted := watching
	relisted.relisted = true
	relistedConfirming := confirming
	relistedConfirming.relisted = true
	cut := errors.New("stream: unexpected EOF")
	tests := []struct {
		name      string
		st        state
		end       watchEnd
		want      state
		wantRetry retry
	}{
		{"our timeout ends it cleanly: resume at once", watching, watchEnd{err: io.EOF}, watching, retryNow},
		{"a quiet watch at our timeout resumes at once too", watching, watchEnd{err: io.EOF, delivered: false}, watching, retryNow},
		{"the server ended it early after events: confirm the RV at once", watching,
			watchEnd{err: io.EOF, delivered: true, early: true}, confirming, retryNow},
		{"the server ended it early with nothing: confirm after a backoff", watching,
			watchEnd{err: io.EOF, early: true}, confirming, retryBackoff},
		{"idle deadline: confirm at once", watching, watchEnd{err: fmt.Errorf("x: %w", watch.ErrIdleTimeout), early: true}, confirming, retryNow},
		{"a cut after events resumes at once (no backoff)", watching, watchEnd{err: cut, delivered: true, early: true}, confirming, retryNow},
		{"a cut before any event backs off", watching, watchEnd{err: cut, opened: true, lasted: 999 * time.Millisecond, early: true}, confirming, retryBackoff},
		{"a cut after a quiet second resumes at once", watching, watchEnd{err: cut, opened: true, lasted: time.Second, early: true}, confirming, retryNow},
		{"a refused connection backs off however long it took", watching, watchEnd{err: cut, lasted: time.Minute, early: true}, confirming, retryBackoff},
		{"410 relists from the last RV, not from empty", watching, watchEnd{err: status(410, "Expired"), delivered: true, early: true},
			state{phase: phaseList, rv: "100", listRV: "100", listMatch: watch.MatchNotOlderThan, synced: true, streaming: streamNo, relisted: true}, retryJitter},
		{"410 with streaming relists by streaming from the last RV", streamingWatch, watchEnd{err: status(410, "Gone"), early: true},
			state{phase: phaseStreamList, rv: "100", listRV: "100", listMatch: watch.MatchNotOlderThan, synced: true, streaming: streamOnly, relisted: true}, retryJitter},
		{"504 too large relists the latest state", watching, watchEnd{err: tooLarge(), early: true}, latest, retryJitter},
		{"a second 410 before any watch worked backs off", relisted, watchEnd{err: status(410, "Expired"), opened: true, early: true},
			relisting, retryBackoff},
		{"a 410 after a watch that worked is jittered again", relisted, watchEnd{err: status(410, "Expired"), delivered: true, early: true},
			relisting, retryJitter},
		{"a working watch clears relisted", relisted, watchEnd{err: io.EOF, delivered: true, early: true}, confirming, retryNow},
		{"a failed one keeps it", relisted, watchEnd{err: status(503, ""), early: true}, relistedConfirming, retryBackoff},
		{"429 on open keeps the RV and backs off", watching, watchEnd{err: status(429, ""), early: true}, confirming, retryBackoff},
		{"500 on open keeps the RV and backs off", watching, watchEnd{err: status(500, ""), early: true}, confirming, retryBackoff},
		{"a bad frame after events resumes at once", watching, watchEnd{err: errors.New("malformed frame at offset 10"), delivered: true, early: true}, confirming, retryNow},
	}
	for _, tt := range tests {
		got, r := afterWatch(tt.st, tt.end)
		if got != tt.want || r != tt.wantRetry {
			t.Errorf("%s:\n got %+v retry %d\nwant %+v retry %d", tt.name, got, r, tt.want, tt.wantRetry)
		}
	}
}

func TestAfterConfirm(t *testing.T) {
	confirming := state{phase: phaseConfirm, rv: "100", listRV: "0", synced: true, streaming: streamNo}
	watching := confirming
	watching.phase = phaseWatch
	streaming := confirming
	streaming.streaming = streamOnly
	latest := state{phase: phaseList, rv: "100", synced: true, streaming: streamNo, distrust: true}
	failedOnce := confirming
	failedOnce.confirmFailures = 1
	timedOut := fmt.Errorf("list pods: %w", context.DeadlineExceeded)
	failedTwice := confirming
	failedTwice.confirmFailures = 2
	unreachable := &net.OpError{Op: "dial", Err: errors.New("refused")}
	tests := []struct {
		name      string
		st        state
		err       error
		serverRV  string
		want      state
		wantRetry retry
	}{
		{"the server has our RV: watch from it", confirming, nil, "100", watching, retryNow},
		{"the server is ahead: watch from ours", confirming, nil, "250", watching, retryNow},
		{"an RV that does not parse proves nothing", confirming, nil, "abc", watching, retryNow},
		{"a success clears the failures", failedTwice, nil, "100", watching, retryNow},
		{"the server answers an older RV: it is behind us", confirming, nil, "20", latest, retryJitter},
		{"the server is behind us: list its latest state", confirming, tooLarge(), "", latest, retryJitter},
		{"behind us, streaming: stream its latest state", streaming, tooLarge(), "",
			state{phase: phaseStreamList, rv: "100", synced: true, streaming: streamOnly, distrust: true}, retryJitter},
		{"410: list the latest state", confirming, status(410, "Expired"), "", latest, retryJitter},
		{"a refusal cannot be confirmed: list instead", confirming, status(400, "BadRequest"), "", latest, retryJitter},
		{"unreachable: ask again after a backoff, for as long as it takes", failedTwice, unreachable, "", failedTwice, retryBackoff},
		{"a plain 504 is not too large", confirming, status(504, "Timeout"), "", confirming, retryBackoff},
		{"a timeout counts", confirming, timedOut, "", failedOnce, retryBackoff},
		{"the third timeout in a row gives up asking and lists", failedTwice, timedOut, "", latest, retryBackoff},
		{"an idle deadline counts too", failedTwice, fmt.Errorf("x: %w", watch.ErrIdleTimeout), "", latest, retryBackoff},
	}
	for _, tt := range tests {
		got, r := afterConfirm(tt.st, tt.err, tt.serverRV)
		if got != tt.want || r != tt.wantRetry {
			t.Errorf("%s:\n got %+v retry %d\nwant %+v retry %d", tt.name, got, r, tt.want, tt.wantRetry)
		}
	}
}

func TestAfterStreamList(t *testing.T) {
	auto := state{phase: phaseStreamList, streaming: streamAuto}
	// A ListAuto informer whose streaming lists worked, relisting from its
	// RV after a 410.
	relisting := state{phase: phaseStreamList, rv: "100", listRV: "100", listMatch: watch.MatchNotOlderThan,
		synced: true, streaming: streamAuto, relisted: true}
	paging := relisting
	paging.phase, paging.streaming = phaseList, streamNo
	failedOnce := relisting
	failedOnce.streamFailures = 1
	cut := errors.New("stream: unexpected EOF")
	tests := []struct {
		name      string
		st        state
		end       watchEnd
		want      state
		wantRetry retry
	}{
		{"unsupported falls back to a paged list from RV 0", auto, watchEnd{err: &unsupportedStreamError{what: "x"}, opened: true},
			state{phase: phaseList, listRV: "0", streaming: streamNo}, retryNow},
		{"422 falls back too", auto, watchEnd{err: status(422, "Invalid")},
			state{phase: phaseList, listRV: "0", streaming: streamNo}, retryNow},
		{"after streaming lists worked, unsupported pages from the same RV", relisting,
			watchEnd{err: &unsupportedStreamError{what: "a MODIFIED event came first"}, opened: true}, paging, retryNow},
		{"forced streaming backs off instead", state{phase: phaseStreamList, streaming: streamOnly}, watchEnd{err: &unsupportedStreamError{what: "x"}},
			state{phase: phaseStreamList, streaming: streamOnly}, retryBackoff},
		{"410 from an RV falls back to empty", state{phase: phaseStreamList, listRV: "7", listMatch: watch.MatchNotOlderThan}, watchEnd{err: status(410, "")},
			state{phase: phaseStreamList}, retryNow},
		{"an accepted stream that ends early backs off and streams again", relisting, watchEnd{err: errEndedEarly, opened: true},
			failedOnce, retryBackoff},
		{"a second one in a row pages from the same RV", failedOnce, watchEnd{err: fmt.Errorf("x: %w", watch.ErrIdleTimeout), opened: true},
			paging, retryBackoff},
		{"a cut counts too", failedOnce, watchEnd{err: cut, opened: true}, paging, retryBackoff},
		{"a refused connection does not count", failedOnce, watchEnd{err: cut}, failedOnce, retryBackoff},
		{"a 503 does not count", relisting, watchEnd{err: status(503, "")}, relisting, retryBackoff},
		{"forced streaming never counts", state{phase: phaseStreamList, streaming: streamOnly}, watchEnd{err: errEndedEarly, opened: true},
			state{phase: phaseStreamList, streaming: streamOnly}, retryBackoff},
		{"504 too large from an RV streams the latest state", state{phase: phaseStreamList, listRV: "7", listMatch: watch.MatchNotOlderThan, streaming: streamOnly},
			watchEnd{err: tooLarge()}, state{phase: phaseStreamList, streaming: streamOnly, distrust: true}, retryJitter},
		{"504 too large at RV empty backs off", state{phase: phaseStreamList, streaming: streamOnly}, watchEnd{err: tooLarge()},
			state{phase: phaseStreamList, streaming: streamOnly}, retryBackoff},
	}
	for _, tt := range tests {
		got, r := afterStreamList(tt.st, tt.end)
		if got != tt.want || r != tt.wantRetry {
			t.Errorf("%s:\n got %+v retry %d\nwant %+v retry %d", tt.name, got, r, tt.want, tt.wantRetry)
		}
	}
}

func TestAfterBookmarkAdvancesRV(t *testing.T) {
	st := afterBookmark(state{rv: "5"}, "9")
	if st.rv != "9" {
		t.Fatalf("got rv %q, want 9", st.rv)
	}
	if st = afterBookmark(st, ""); st.rv != "9" {
		t.Fatalf("empty bookmark RV changed rv to %q", st.rv)
	}
}
