package sim_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// frameRecorder is a ResponseWriter that keeps each write (one watch frame) with the
// time it was made, for tests that run the handler in a synctest bubble.
type frameRecorder struct {
	mu     sync.Mutex
	header http.Header
	code   int
	start  time.Time
	frames []timedFrame
}

type timedFrame struct {
	at    time.Duration // since the recorder was made
	event wevent
	raw   string
}

func newFrameRecorder() *frameRecorder {
	return &frameRecorder{header: http.Header{}, start: time.Now()}
}

func (fr *frameRecorder) Header() http.Header  { return fr.header }
func (fr *frameRecorder) WriteHeader(code int) { fr.code = code }
func (fr *frameRecorder) Flush()               {}

func (fr *frameRecorder) Write(b []byte) (int, error) {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	f := timedFrame{at: time.Since(fr.start), raw: string(b)}
	_ = json.Unmarshal(bytes.TrimSpace(b), &f.event) // checked by the caller through event.Type
	fr.frames = append(fr.frames, f)
	return len(b), nil
}

func (fr *frameRecorder) snapshot() []timedFrame {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return append([]timedFrame(nil), fr.frames...)
}

// bookmarkCase is one scripted watch: the query, changes made at given times after
// the watch starts, and the frames expected (type, time, RV) until the stream ends.
type bookmarkCase struct {
	name    string
	opts    sim.Options
	query   string                                          // after watch=1&resourceVersion=<rv>
	changes map[time.Duration]func(*testing.T, *sim.Server) // offset -> change
	want    func(changeRVs map[time.Duration]uint64) []wantFrame
}

type wantFrame struct {
	typ string
	at  time.Duration
	rv  uint64
}

func putElsewhere(ns, name string, labels map[string]string) func(*testing.T, *sim.Server) {
	return func(t *testing.T, s *sim.Server) {
		_, err := s.PutPod(sim.Pod{Namespace: ns, Name: name, Labels: labels})
		require.NoError(t, err)
	}
}

func TestPreDeadlineBookmark(t *testing.T) {
	const q12 = "&allowWatchBookmarks=true&timeoutSeconds=12"
	other := map[time.Duration]func(*testing.T, *sim.Server){time.Second: putElsewhere("other", "elsewhere", nil)}
	tests := []bookmarkCase{
		{name: "change in another namespace", query: q12, changes: other,
			want: func(rv map[time.Duration]uint64) []wantFrame {
				return []wantFrame{{"BOOKMARK", 10 * time.Second, rv[time.Second]}}
			}},
		{name: "quiet watch gets none", query: q12,
			want: func(map[time.Duration]uint64) []wantFrame { return nil }},
		{name: "change outside the label selector", query: q12 + "&labelSelector=app%3Dmine",
			changes: map[time.Duration]func(*testing.T, *sim.Server){time.Second: putElsewhere("demo", "theirs", map[string]string{"app": "theirs"})},
			want: func(rv map[time.Duration]uint64) []wantFrame {
				return []wantFrame{{"BOOKMARK", 10 * time.Second, rv[time.Second]}}
			}},
		{name: "change of another resource only", query: q12,
			changes: map[time.Duration]func(*testing.T, *sim.Server){time.Second: func(t *testing.T, s *sim.Server) {
				_, err := s.Create("configmaps", []byte(`{"metadata":{"name":"c","namespace":"demo"}}`))
				require.NoError(t, err)
			}},
			want: func(map[time.Duration]uint64) []wantFrame { return nil }},
		{name: "own event then the bookmark", query: q12,
			changes: map[time.Duration]func(*testing.T, *sim.Server){time.Second: putElsewhere("demo", "mine", nil)},
			want: func(rv map[time.Duration]uint64) []wantFrame {
				return []wantFrame{{"ADDED", time.Second, rv[time.Second]}, {"BOOKMARK", 10 * time.Second, rv[time.Second]}}
			}},
		{name: "change after the bookmark point: one chance only", query: q12,
			changes: map[time.Duration]func(*testing.T, *sim.Server){11 * time.Second: putElsewhere("other", "late", nil)},
			want:    func(map[time.Duration]uint64) []wantFrame { return nil }},
		{name: "configured lead", query: q12, changes: other, opts: sim.Options{DeadlineBookmarkLead: 5 * time.Second},
			want: func(rv map[time.Duration]uint64) []wantFrame {
				return []wantFrame{{"BOOKMARK", 7 * time.Second, rv[time.Second]}}
			}},
		{name: "negative lead turns it off", query: q12, changes: other, opts: sim.Options{DeadlineBookmarkLead: -1},
			want: func(map[time.Duration]uint64) []wantFrame { return nil }},
		{name: "bookmarks not allowed", query: "&timeoutSeconds=12", changes: other,
			want: func(map[time.Duration]uint64) []wantFrame { return nil }},
		{name: "timeout not longer than the lead", query: "&allowWatchBookmarks=true&timeoutSeconds=2",
			changes: map[time.Duration]func(*testing.T, *sim.Server){0: putElsewhere("other", "elsewhere", nil)},
			want:    func(map[time.Duration]uint64) []wantFrame { return nil }},
		{name: "periodic bookmarks continue", query: q12, opts: sim.Options{BookmarkInterval: 5 * time.Second},
			want: func(map[time.Duration]uint64) []wantFrame {
				return []wantFrame{{"BOOKMARK", 5 * time.Second, 0}, {"BOOKMARK", 10 * time.Second, 0}}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { runBookmarkCase(t, tc) })
		})
	}
}

func runBookmarkCase(t *testing.T, tc bookmarkCase) {
	srv, err := sim.New(tc.opts)
	require.NoError(t, err)
	_, err = srv.PutPod(sim.Pod{Namespace: "demo", Name: "first"})
	require.NoError(t, err)
	startRV, err := srv.PutPod(sim.Pod{Namespace: "other", Name: "seed"}) // both namespaces exist before the watch
	require.NoError(t, err)
	rec := newFrameRecorder()
	req := httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/demo/pods?watch=1&resourceVersion="+
		strconv.FormatUint(startRV, 10)+tc.query, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Handler().ServeHTTP(rec, req)
	}()
	changeRVs := map[time.Duration]uint64{}
	var elapsed time.Duration
	for _, at := range slices.Sorted(maps.Keys(tc.changes)) {
		time.Sleep(at - elapsed)
		elapsed = at
		tc.changes[at](t, srv)
		changeRVs[at] = srv.ResourceVersion()
	}
	<-done // the bubble's clock runs to the timeout
	require.Equal(t, http.StatusOK, rec.code)
	var got []wantFrame
	for _, f := range rec.snapshot() {
		require.NotEmpty(t, f.event.Type, "frame is not an event: %q", f.raw)
		rv, err := strconv.ParseUint(f.event.rv(), 10, 64)
		require.NoError(t, err, "frame %q", f.raw)
		got = append(got, wantFrame{typ: f.event.Type, at: f.at, rv: rv})
	}
	want := tc.want(changeRVs)
	for i := range want {
		if want[i].rv == 0 {
			want[i].rv = startRV // unchanged: the watcher's start
		}
	}
	require.Equal(t, want, got, "frames (type, time after the watch began, RV)")
}
