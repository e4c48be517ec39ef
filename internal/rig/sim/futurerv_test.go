package sim_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// These tests check the simulator against the captures of a client that is ahead
// of the server (an etcd restore, a replaced control plane): requests at a
// resourceVersion the server has not reached. They call the handler directly,
// in a synctest bubble, so the server's 3 s wait and the watch's timeoutSeconds
// pass on the bubble's clock and can be checked to the nanosecond.

// timedRecorder is an http.ResponseWriter (and Flusher) that records when the
// headers went out and when each piece of the body was written, on the clock of
// the goroutine calling it (synctest's fake clock inside a bubble). Safe for
// concurrent use.
type timedRecorder struct {
	mu       sync.Mutex
	header   http.Header
	sent     http.Header // the headers as WriteHeader sent them
	code     int
	headerAt time.Time
	body     bytes.Buffer
	writes   []time.Time // when each non-empty Write happened
}

func newTimedRecorder() *timedRecorder { return &timedRecorder{header: http.Header{}} }

func (r *timedRecorder) Header() http.Header { return r.header }

func (r *timedRecorder) WriteHeader(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.code != 0 {
		return
	}
	r.code, r.headerAt, r.sent = code, time.Now(), r.header.Clone()
}

func (r *timedRecorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(p) > 0 {
		r.writes = append(r.writes, time.Now())
	}
	return r.body.Write(p)
}

func (r *timedRecorder) Flush() { r.WriteHeader(http.StatusOK) }

// splitCapture splits a curl -i capture into its status code, headers and body.
func splitCapture(t *testing.T, name string) (int, http.Header, []byte) {
	t.Helper()
	raw := capture(t, name)
	head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	require.True(t, ok, "%s: no blank line after the headers", name)
	lines := strings.Split(string(head), "\r\n")
	fields := strings.Fields(lines[0]) // "HTTP/2 504"
	require.Len(t, fields, 2, "%s: status line %q", name, lines[0])
	code, err := strconv.Atoi(fields[1])
	require.NoError(t, err)
	h := http.Header{}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ": ")
		require.True(t, ok, "%s: header line %q", name, l)
		h.Add(k, v)
	}
	return code, h, body
}

// requireSameHeaders checks the headers of the capture that are about the
// protocol (not audit ids, flow-control uids, dates or lengths) came out alike.
func requireSameHeaders(t *testing.T, name string, want, got http.Header) {
	t.Helper()
	for _, k := range []string{"Content-Type", "Cache-Control", "Retry-After"} {
		require.Equal(t, want.Values(k), got.Values(k), "%s: header %s", name, k)
	}
}

// tooLargeMessage is the message of the 504 for a request at want when the
// server is at current.
func tooLargeMessage(want, current uint64) string {
	return "Timeout: Too large resource version: " + strconvU(want) + ", current: " + strconvU(current)
}

// captureMessage reads the message of the Status in a capture's body.
func captureMessage(t *testing.T, status []byte) string {
	t.Helper()
	var st struct {
		Message string `json:"message"`
	}
	require.NoError(t, json.Unmarshal(status, &st))
	return st.Message
}

// futureServer is a simulator holding a few pods, built inside the bubble.
func futureServer(t *testing.T, opts sim.Options) (*sim.Server, uint64) {
	t.Helper()
	srv, err := sim.New(opts)
	require.NoError(t, err)
	for i := range 3 {
		_, err := srv.PutPod(sim.Pod{Namespace: "demo", Name: "worker-" + strconv.Itoa(i)})
		require.NoError(t, err)
	}
	return srv, srv.ResourceVersion()
}

func TestListAtFutureRVMatchesCapture(t *testing.T) {
	for _, tc := range []struct{ capture, query string }{
		{"list-pods-future-rv.txt", ""},
		{"list-pods-future-rv-notolderthan.txt", "&resourceVersionMatch=NotOlderThan"},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			wantCode, wantHdr, wantBody := splitCapture(t, tc.capture)
			var compact bytes.Buffer
			require.NoError(t, json.Compact(&compact, wantBody))
			synctest.Test(t, func(t *testing.T) {
				srv, cur := futureServer(t, sim.Options{})
				ahead := cur + 100000
				rec := newTimedRecorder()
				start := time.Now()
				srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET",
					"/api/v1/namespaces/demo/pods?resourceVersion="+strconvU(ahead)+tc.query, nil))
				require.Equal(t, sim.DefaultTooLargeWait, rec.headerAt.Sub(start), "the answer comes after the wait, as the real server's after about 3 s")
				require.Equal(t, wantCode, rec.code)
				requireSameHeaders(t, tc.capture, wantHdr, rec.sent)
				// Field for field, in the real server's order: only the numbers in
				// the message differ.
				want := strings.Replace(compact.String(), captureMessage(t, wantBody), tooLargeMessage(ahead, cur), 1)
				require.Equal(t, want, rec.body.String())
			})
		})
	}
}

func TestStreamingListAtFutureRVMatchesCapture(t *testing.T) {
	const name = "watch-pods-future-rv-streaming.txt"
	wantCode, wantHdr, wantBody := splitCapture(t, name)
	synctest.Test(t, func(t *testing.T) {
		srv, cur := futureServer(t, sim.Options{})
		ahead := cur + 100000
		rec := newTimedRecorder()
		start := time.Now()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/namespaces/demo/pods?watch=1&sendInitialEvents=true"+
			"&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion="+strconvU(ahead), nil))
		end := time.Since(start)
		require.Equal(t, wantCode, rec.code)
		require.Zero(t, rec.headerAt.Sub(start), "200 at once, before the wait")
		requireSameHeaders(t, name, wantHdr, rec.sent)
		require.NotEmpty(t, rec.writes)
		require.Equal(t, sim.DefaultTooLargeWait, rec.writes[0].Sub(start), "the ERROR event comes after the wait")
		require.Equal(t, sim.DefaultTooLargeWait, end, "and ends the stream")
		// One frame: the ERROR event with the list's 504 Status, as captured.
		var ev struct {
			Object json.RawMessage `json:"object"`
		}
		require.NoError(t, json.Unmarshal(wantBody, &ev))
		want := strings.Replace(string(wantBody), captureMessage(t, ev.Object), tooLargeMessage(ahead, cur), 1)
		require.Equal(t, want, rec.body.String())
	})
}

func TestStreamingListReachedDuringTheWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, cur := futureServer(t, sim.Options{})
		rec := newTimedRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/namespaces/demo/pods?watch=1&sendInitialEvents=true"+
				"&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=10&resourceVersion="+strconvU(cur+1), nil))
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		_, err := srv.PutPod(sim.Pod{Namespace: "demo", Name: "late"})
		require.NoError(t, err)
		<-done
		body := rec.body.String()
		require.NotContains(t, body, `"ERROR"`)
		require.Equal(t, 4, strings.Count(body, `"type":"ADDED"`), "the initial events at the RV once it is reached: %s", body)
		require.Contains(t, body, `"k8s.io/initial-events-end":"true"`)
	})
}

// TestStreamingListWaitingForItsRVEndsAtARestart: a streaming list
// waiting for a resourceVersion the server has not reached ends, cleanly
// and at once, when the server restarts (DropWatches), as every watch
// does; before, it waited out the 3 s and sent its 504 after the restart.
func TestStreamingListWaitingForItsRVEndsAtARestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, cur := futureServer(t, sim.Options{})
		rec := newTimedRecorder()
		done := make(chan struct{})
		start := time.Now()
		go func() {
			defer close(done)
			srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/namespaces/demo/pods?watch=1&sendInitialEvents=true"+
				"&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion="+strconvU(cur+100), nil))
		}()
		synctest.Wait() // the stream waits for its resourceVersion
		srv.DropWatches(false)
		<-done
		require.Zero(t, time.Since(start), "the restart ends the wait at once, not after the 3 s")
		require.Equal(t, http.StatusOK, rec.code)
		require.Empty(t, rec.body.String(), "no ERROR event: the stream ends as at any restart")
	})
}

func TestWatchFromFutureRVIsSilent(t *testing.T) {
	const name = "watch-pods-future-rv.txt"
	wantCode, wantHdr, wantBody := splitCapture(t, name)
	require.Empty(t, wantBody, "the capture: nothing after the headers")
	for _, tc := range []struct {
		name  string
		query string
	}{
		{"as captured", ""},
		{"with bookmarks", "&allowWatchBookmarks=true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// Bookmarks every 0.7 s: the simulator's quiet-watch bookmark
				// would come 21 times before the timeout if it were sent.
				srv, cur := futureServer(t, sim.Options{BookmarkInterval: 700 * time.Millisecond})
				rec := newTimedRecorder()
				start := time.Now()
				srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/namespaces/demo/pods?watch=1&timeoutSeconds=15"+
					tc.query+"&resourceVersion="+strconvU(cur+100000), nil))
				require.Equal(t, 15*time.Second, time.Since(start), "open until timeoutSeconds")
				require.Equal(t, wantCode, rec.code)
				require.Zero(t, rec.headerAt.Sub(start), "200 at once")
				requireSameHeaders(t, name, wantHdr, rec.sent)
				require.Empty(t, rec.body.String(), "no event and no bookmark")
			})
		})
	}
}

// TestWatchBookmarksWhenNotAhead is the control for TestWatchFromFutureRVIsSilent:
// the same watch from the server's own RV gets its periodic bookmarks.
func TestWatchBookmarksWhenNotAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, cur := futureServer(t, sim.Options{BookmarkInterval: 700 * time.Millisecond})
		rec := newTimedRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/namespaces/demo/pods?watch=1&timeoutSeconds=15"+
			"&allowWatchBookmarks=true&resourceVersion="+strconvU(cur), nil))
		require.Equal(t, 21, strings.Count(rec.body.String(), `"type":"BOOKMARK"`), "%s", rec.body.String())
	})
}
