package informer

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/testutil"
)

// TestServerRestoredToAnOlderState replaces the API server with one whose
// state is older (an etcd restore, a replaced control plane): fewer pods,
// and a resourceVersion counter behind the informer's. The real server
// answers a watch from such an RV with a silent stream, so only the
// confirmation finds it out: after the simulator's TooLargeWait (3 s, as
// the real server) it answers 504 ResourceVersionTooLarge, the informer
// relists from "" and its store and a handler's replay equal the new
// server, deletes included.
func TestServerRestoredToAnOlderState(t *testing.T) {
	for _, mode := range []ListMode{ListPaged, ListAuto} {
		t.Run(fmt.Sprint("mode=", mode), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { runRestore(t, mode) })
		})
	}
}

func runRestore(t *testing.T, mode ListMode) {
	n := &testutil.MemNet{}
	old := startMemSim(t, n, "api:80", sim.Options{})
	for i := range 30 {
		_, err := old.Server.PutPod(sim.Pod{Namespace: "ns", Name: fmt.Sprintf("p-%d", i)})
		require.NoError(t, err)
	}
	opts := memOptions(t, n, "api:80")
	opts.ListMode = mode
	// An idle deadline shorter than the server's 3 s wait before its 504:
	// the confirmation must not be cut by it.
	opts.IdleTimeout = 2 * time.Second
	inf, err := New(opts)
	require.NoError(t, err)
	rep := newReplayer()
	_, err = inf.AddHandler(rep, HandlerOptions{})
	require.NoError(t, err)
	start(t, inf)
	require.True(t, inf.WaitForSync(t.Context()))
	for i := range 100 { // the old server's RV runs well ahead
		_, err := old.Server.PutPod(sim.Pod{Namespace: "ns", Name: fmt.Sprintf("p-%d", i%30), Restarts: int32(i)})
		require.NoError(t, err)
	}
	time.Sleep(10 * time.Second)
	synctest.Wait()
	oldRV := inf.Store().ResourceVersion()

	old.stop()
	restored := startMemSim(t, n, "api:80", sim.Options{})
	for i := range 10 { // p-0..p-4 survive, in older versions; p-100.. are new
		name := fmt.Sprintf("p-%d", i)
		if i >= 5 {
			name = fmt.Sprintf("p-%d", 100+i)
		}
		_, err := restored.Server.PutPod(sim.Pod{Namespace: "ns", Name: name})
		require.NoError(t, err)
	}
	stopped := time.Now()
	time.Sleep(time.Minute)
	synctest.Wait()

	want := serverState(t, restored.Server)
	require.Len(t, want, 10)
	require.Equal(t, want, storeRVs(inf), "the store is the restored server's state")
	got, violations := rep.snapshot()
	require.Equal(t, want, got, "a handler's replay is the restored server's state")
	require.Empty(t, violations)
	require.NotEqual(t, oldRV, inf.Store().ResourceVersion())
	// The first confirmation may meet the gap between the two servers
	// (connection refused); a later one finds the new server behind.
	require.GreaterOrEqual(t, inf.Stats().Confirms, int64(1))
	require.EqualValues(t, 2, inf.Stats().Relists, "the first sync and one relist of the latest state")
	h := inf.Health()
	require.True(t, h.LastErrorTime.Sub(stopped) >= sim.DefaultTooLargeWait, "the 504 came after the server's wait")
}
