package informer

import (
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/kwatch/kwatch/watch"
)

func status(code int32, reason string) error {
	return &watch.OpError{Op: "x", Err: &watch.StatusError{Code: code, Reason: reason}}
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

func TestAfterWatch(t *testing.T) {
	watching := state{phase: phaseWatch, rv: "100", listRV: "0", synced: true, streaming: streamNo}
	streamingWatch := watching
	streamingWatch.streaming = streamYes
	tests := []struct {
		name      string
		st        state
		err       error
		want      state
		wantRetry retry
	}{
		{"clean end resumes at once", watching, io.EOF, watching, retryNow},
		{"idle deadline resumes at once", watching, fmt.Errorf("x: %w", watch.ErrIdleTimeout), watching, retryNow},
		{"410 relists from the last RV, not from empty", watching, status(410, "Expired"),
			state{phase: phaseList, rv: "100", listRV: "100", listMatch: watch.MatchNotOlderThan, synced: true, streaming: streamNo}, retryJitter},
		{"410 with streaming relists by streaming from the last RV", streamingWatch, status(410, "Gone"),
			state{phase: phaseStreamList, rv: "100", listRV: "100", listMatch: watch.MatchNotOlderThan, synced: true, streaming: streamYes}, retryJitter},
		{"429 keeps the RV", watching, status(429, ""), watching, retryBackoff},
		{"500 keeps the RV", watching, status(500, ""), watching, retryBackoff},
		{"bad frame keeps the RV", watching, errors.New("malformed frame at offset 10"), watching, retryBackoff},
	}
	for _, tt := range tests {
		got, r := afterWatch(tt.st, tt.err)
		if got != tt.want || r != tt.wantRetry {
			t.Errorf("%s:\n got %+v retry %d\nwant %+v retry %d", tt.name, got, r, tt.want, tt.wantRetry)
		}
	}
}

func TestAfterStreamList(t *testing.T) {
	unknown := state{phase: phaseStreamList, streaming: streamUnknown}
	tests := []struct {
		name      string
		st        state
		err       error
		want      state
		wantRetry retry
	}{
		{"unsupported falls back to a paged list from RV 0", unknown, &unsupportedStreamError{what: "x"},
			state{phase: phaseList, listRV: "0", streaming: streamNo}, retryNow},
		{"422 falls back too", unknown, status(422, "Invalid"),
			state{phase: phaseList, listRV: "0", streaming: streamNo}, retryNow},
		{"forced streaming backs off instead", state{phase: phaseStreamList, streaming: streamYes}, &unsupportedStreamError{what: "x"},
			state{phase: phaseStreamList, streaming: streamYes}, retryBackoff},
		{"410 from an RV falls back to empty", state{phase: phaseStreamList, listRV: "7", listMatch: watch.MatchNotOlderThan}, status(410, ""),
			state{phase: phaseStreamList}, retryNow},
		{"an early end backs off and retries streaming", unknown, errEndedEarly, unknown, retryBackoff},
	}
	for _, tt := range tests {
		got, r := afterStreamList(tt.st, tt.err)
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
