package main

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// TestPrintedEventsAreTheServers checks that "kwatch -o json
// --output-watch-events" prints every change the server made, in the
// server's order, as kubectl prints every event it reads: under steady
// churn (pods created, changed, given a deletionTimestamp and deleted), over
// a restart of the server's watches (resumed from the last
// resourceVersion), and across a pause of the process (SIGSTOP, while the
// server keeps changing, then SIGCONT). No relist happens here (the history
// holds every change), so the printed sequence after the initial list must
// equal the server's history exactly; TestReplayAfterFaults covers relists.
func TestPrintedEventsAreTheServers(t *testing.T) {
	h := simkit.Start(t, sim.Options{HistorySize: 1 << 20})
	srv := h.Server
	_, err := srv.LoadPods(100, 3, 5)
	require.NoError(t, err)
	journal, stopJournal := srv.Journal("pods")
	defer stopJournal()
	p := start(t, testEnv(t), "pods", "-A", "-o", "json", "--output-watch-events", "--kubeconfig", h.Kubeconfig(t))
	rp := replay(p.stdout)
	rp.waitUntil(t, "initial list printed", func(got map[string]string, _ map[string]int) bool { return len(got) == 100 })

	ctx, cancel := context.WithCancel(context.Background())
	churn, err := sim.NewChurn(srv, sim.ChurnOptions{Namespaces: 3, Rate: 300, Seed: 11})
	require.NoError(t, err)
	var churnErr error
	churnDone := make(chan struct{})
	go func() { defer close(churnDone); churnErr = churn.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-churnDone })
	printedAtLeast := func(n int) func(map[string]string, map[string]int) bool {
		return func(_ map[string]string, events map[string]int) bool {
			return events["ADDED"]+events["MODIFIED"]+events["DELETED"] >= n
		}
	}
	rp.waitUntil(t, "steady churn printed", printedAtLeast(100+300))

	watches := srv.Stats().ByResource["pods"].Watch
	srv.DropWatches(false)
	eventually(t, "kwatch watches again", func() bool { return srv.Stats().ByResource["pods"].Watch > watches })
	rp.waitUntil(t, "changes printed after the watch resumed", printedAtLeast(len(journal())+100))

	// The pause: the server keeps changing while kwatch cannot read.
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGSTOP))
	resumed := false
	defer func() {
		if !resumed {
			_ = p.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	n := len(journal())
	eventually(t, "the server changes while kwatch is stopped", func() bool { return len(journal()) >= n+1500 })
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGCONT))
	resumed = true
	n = len(journal())
	eventually(t, "the server changes after kwatch resumed", func() bool { return len(journal()) >= n+300 })

	cancel()
	select {
	case <-churnDone:
		require.NoError(t, churnErr)
	case <-time.After(wait):
		t.Fatalf("churn did not stop within %s", wait)
	}
	history := journal()
	rp.waitUntil(t, "every change printed", printedAtLeast(100+len(history)))
	want := make([]printed, len(history))
	deletionMarked := 0
	for i, c := range history {
		want[i] = printed{c.Type, c.Namespace + "/" + c.Name, strconv.FormatUint(c.ResourceVersion, 10)}
		if c.Type == "DELETED" && i > 0 && history[i-1].Type == "MODIFIED" && history[i-1].Name == c.Name {
			deletionMarked++
		}
	}
	got := rp.sequence()[100:]
	require.Equal(t, len(want), len(got), "events printed after the initial list, against the server's history")
	for i := range want {
		require.Equal(t, want[i], got[i], "event %d of %d: got %s, want the server's %s", i, len(want), got[i], want[i])
	}
	t.Logf("%d changes printed exactly as the server made them (%d deletes right after a MODIFIED)", len(want), deletionMarked)

	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	<-rp.ended
	require.Equal(t, 0, p.wait(), "stderr: %s", p.stderr.String())
	require.NotContains(t, p.stderr.String(), "merged", "nothing was merged")
}
