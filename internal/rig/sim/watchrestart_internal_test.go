package sim

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A restart that comes after a watch arrived and took its faults, but before
// the watch started, ends that watch too, and a split-writes fault queued
// just before the restart, or taken by that watch and never applied, waits
// for the client's next watch. Before, the watch took its restart channel
// only when it started and so outlived the restart, and a split-writes fault
// it had taken was lost; either way the fault waited for a watch that never
// came (cmd/kwatch's TestReplayAfterFaults failed so in CI: split-writes
// dealt 1, fired 0, after 90 s).
func TestRestartEndsAWatchBetweenFaultsAndStart(t *testing.T) {
	for _, tc := range []struct {
		name        string
		injectFirst bool // the watch takes the fault, then the restart comes
	}{{"fault queued before the restart", false}, {"fault taken by the restarted watch", true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := New(Options{})
			require.NoError(t, err)
			_, err = srv.PutPod(Pod{Namespace: "demo", Name: "a"})
			require.NoError(t, err)
			split := Fault{Type: FaultSplitWrites, Match: "watch", Resource: "pods"}
			if tc.injectFirst {
				require.NoError(t, srv.InjectFault(split))
			}
			var once sync.Once
			srv.watchTookFaults = func() {
				once.Do(func() { // the first watch, between taking its faults and starting
					if !tc.injectFirst {
						if err := srv.InjectFault(split); err != nil {
							t.Error(err) // on the handler's goroutine: no FailNow
						}
					}
					srv.DropWatches(false)
				})
			}
			hs := httptest.NewServer(srv.Handler())
			defer hs.Close()
			url := hs.URL + "/api/v1/namespaces/demo/pods?watch=1&resourceVersion=" + strconv.FormatUint(srv.ResourceVersion(), 10)
			// A guard against a hang (the watch outliving the restart), not a speed limit.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			get := func() *http.Response {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				require.NoError(t, err)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				return resp
			}

			first := get()
			body, err := io.ReadAll(first.Body)
			first.Body.Close()
			require.NoError(t, err, "the restart ends the first watch")
			require.Empty(t, body)
			require.Len(t, srv.Faults(), 1, "the fault waits for the next watch")
			require.Zero(t, srv.FiredFaults()[FaultSplitWrites])

			next := get()
			defer next.Body.Close()
			_, err = srv.PutPod(Pod{Namespace: "demo", Name: "b"})
			require.NoError(t, err)
			line, err := bufio.NewReader(next.Body).ReadBytes('\n')
			require.NoError(t, err, "the next watch sends the event")
			require.Contains(t, string(line), `"name":"b"`)
			require.EqualValues(t, 1, srv.FiredFaults()[FaultSplitWrites], "the next watch's body was split")
			require.Empty(t, srv.Faults())
		})
	}
}
