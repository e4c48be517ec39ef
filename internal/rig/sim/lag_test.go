package sim_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// A watch lag holds every live event and periodic bookmark of the
// resource for the lag after it happened, in order; the list and other
// resources are not delayed; ending the lag releases what is held at once.
func TestWatchLag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lag = 200 * time.Millisecond
		srv, err := sim.New(sim.Options{BookmarkInterval: time.Second})
		require.NoError(t, err)
		startRV, err := srv.PutPod(sim.Pod{Namespace: "demo", Name: "seed"})
		require.NoError(t, err)
		require.NoError(t, srv.SetWatchLag("pods", lag))
		require.Error(t, srv.SetWatchLag("nosuch", lag))
		require.Error(t, srv.SetWatchLag("pods", -time.Second))

		pods := watchFor(srv, "/api/v1/namespaces/demo/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=4&resourceVersion="+
			strconv.FormatUint(startRV, 10))
		cms := watchFor(srv, "/api/v1/namespaces/demo/configmaps?watch=1&timeoutSeconds=4&resourceVersion="+
			strconv.FormatUint(startRV, 10))
		list := httptest.NewRecorder()
		began := time.Now()
		srv.Handler().ServeHTTP(list, httptest.NewRequest(http.MethodGet, "/api/v1/namespaces/demo/pods", nil))
		require.Equal(t, http.StatusOK, list.Code)
		require.Zero(t, time.Since(began), "a list is not delayed")

		time.Sleep(100 * time.Millisecond)
		rv1, err := srv.PutPod(sim.Pod{Namespace: "demo", Name: "a"})
		require.NoError(t, err)
		_, err = srv.Create("configmaps", []byte(`{"metadata":{"name":"c","namespace":"demo"}}`))
		require.NoError(t, err)
		time.Sleep(50 * time.Millisecond)
		rv2, err := srv.PutPod(sim.Pod{Namespace: "demo", Name: "b"})
		require.NoError(t, err)
		time.Sleep(1500*time.Millisecond - 150*time.Millisecond) // to 1.5 s
		require.NoError(t, srv.SetWatchLag("pods", 10*time.Second))
		time.Sleep(100 * time.Millisecond)
		rv3, err := srv.PutPod(sim.Pod{Namespace: "demo", Name: "c"})
		require.NoError(t, err)
		time.Sleep(900 * time.Millisecond) // held for 10 s...
		require.NoError(t, srv.SetWatchLag("pods", 0))
		<-pods.done // ...and released at 2.5 s
		<-cms.done

		require.Equal(t, []wantFrame{
			{"ADDED", 100*time.Millisecond + lag, rv1},
			{"ADDED", 150*time.Millisecond + lag, rv2},
			{"BOOKMARK", time.Second + lag, rv2},
			{"ADDED", 2500 * time.Millisecond, rv3},
			{"BOOKMARK", 2500 * time.Millisecond, rv3}, // due at 2 s, held behind the event
		}, pods.frames(t)[:5])
		require.Equal(t, 100*time.Millisecond, cms.frames(t)[0].at, "another resource is not delayed")
	})
}

type recordedWatch struct {
	rec  *frameRecorder
	done chan struct{}
}

// watchFor serves a watch of path into a frameRecorder until it ends.
func watchFor(srv *sim.Server, path string) *recordedWatch {
	w := &recordedWatch{rec: newFrameRecorder(), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		srv.Handler().ServeHTTP(w.rec, httptest.NewRequest(http.MethodGet, path, nil))
	}()
	return w
}

// frames returns the events written, each with the time of its write: a
// write may carry several (the stream buffers until it has caught up).
func (w *recordedWatch) frames(t *testing.T) []wantFrame {
	var got []wantFrame
	for _, f := range w.rec.snapshot() {
		for _, line := range strings.Split(strings.TrimSpace(f.raw), "\n") {
			var ev wevent
			require.NoError(t, json.Unmarshal([]byte(line), &ev), "frame %q", line)
			rv, err := strconv.ParseUint(ev.rv(), 10, 64)
			require.NoError(t, err, "frame %q", line)
			got = append(got, wantFrame{typ: ev.Type, at: f.at, rv: rv})
		}
	}
	return got
}
