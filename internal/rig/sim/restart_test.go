package sim_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// gatedRecorder records a watch's frames; every write waits until the gate
// is opened, and says on entered that it began.
type gatedRecorder struct {
	*frameRecorder
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedRecorder) Write(b []byte) (int, error) {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.gate
	return g.frameRecorder.Write(b)
}

// A restart ends every open watch before any event written after it: a
// client that restarts the server, then writes, sees the write on its next
// watch, never on the one the restart ended. The stream is held in the
// write of an earlier event while the restart and the write happen, so that
// when it goes on it has both the restart and a new event before it (each
// round, before the fix, sent the new event with even odds).
func TestRestartEndsAWatchBeforeTheNextWrite(t *testing.T) {
	for round := range 32 {
		srv, err := sim.New(sim.Options{})
		require.NoError(t, err)
		rv0, err := srv.PutPod(sim.Pod{Namespace: "demo", Name: "seed"})
		require.NoError(t, err)
		rec := &gatedRecorder{frameRecorder: newFrameRecorder(), entered: make(chan struct{}, 1), gate: make(chan struct{})}
		done := make(chan struct{})
		go func() {
			defer close(done)
			srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet,
				"/api/v1/namespaces/demo/pods?watch=1&resourceVersion="+strconv.FormatUint(rv0, 10), nil))
		}()
		before, err := srv.PutPod(sim.Pod{Namespace: "demo", Name: "before"})
		require.NoError(t, err)
		<-rec.entered // the stream is writing the event before the restart
		srv.DropWatches(false)
		_, err = srv.PutPod(sim.Pod{Namespace: "demo", Name: "after"})
		require.NoError(t, err)
		close(rec.gate)
		<-done

		var rvs []uint64
		for _, f := range rec.snapshot() {
			rv, err := strconv.ParseUint(f.event.rv(), 10, 64)
			require.NoError(t, err, "frame %q", f.raw)
			rvs = append(rvs, rv)
		}
		require.Equal(t, []uint64{before}, rvs, "round %d: the events the ended watch sent", round)
	}
}
