package sim_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// requireFired checks the server's fired counts are exactly want.
func requireFired(t *testing.T, h *simkit.Harness, want map[sim.FaultType]int64, what string) {
	t.Helper()
	got := h.Server.FiredFaults()
	require.Equal(t, want, got, "%s: fired counts: got %v, want %v", what, got, want)
	require.Equal(t, want, h.Server.Stats().FaultsFired, "%s: Stats.FaultsFired", what)
}

// watchUntilGone opens a watch, reads n events, leaves, and waits until the
// server has seen the stream end.
func watchUntilGone(t *testing.T, h *simkit.Harness, path string, n int) {
	t.Helper()
	w := startWatch(t, h, path)
	for range n {
		w.next(t)
	}
	w.cancel()
	require.Eventually(t, func() bool { return h.Server.Stats().ActiveWatches == 0 }, wait, pollEvery)
}

func TestFiredCountsErrorsAndStalls(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultError, Match: "list", Code: 429, Count: 2}))
	requireFired(t, h, map[sim.FaultType]int64{}, "queued only")
	for range 3 {
		do(t, h, "GET", "/api/v1/pods", "", nil)
	}
	requireFired(t, h, map[sim.FaultType]int64{sim.FaultError: 2}, "two lists answered 429, the third served")

	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultStall, Match: "get"}))
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := h.Client.Do(h.NewRequest(t, "GET", "/api/v1/namespaces/default", nil).WithContext(ctx))
	require.NoError(t, err, "a stalled get sends its headers")
	requireFired(t, h, map[sim.FaultType]int64{sim.FaultError: 2, sim.FaultStall: 1}, "a stalled get")
	cancel()
	resp.Body.Close()
}

func TestFiredCountsWatchFaultsOnlyWhenApplied(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 3)
	from := "/api/v1/namespaces/demo/pods?watch=1&resourceVersion=1"

	// Each fault is due after more events than the watch gets before its client
	// leaves: taken, never applied.
	for _, f := range []sim.Fault{
		{Type: sim.FaultDropWatch, AfterEvents: 10},
		{Type: sim.FaultCutWatch, AfterEvents: 10},
		{Type: sim.FaultStall, Match: "watch", AfterEvents: 10},
	} {
		require.NoError(t, h.Server.InjectFault(f))
		watchUntilGone(t, h, from, 3)
		require.Empty(t, h.Server.Faults(), "%s was taken by the watch", f.Type)
	}
	require.EqualValues(t, 3, h.Server.Stats().FaultsInjected, "three watches took a fault")
	requireFired(t, h, map[sim.FaultType]int64{}, "no watch reached its fault")

	// Due after 2 events: each is applied.
	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultDropWatch, AfterEvents: 2}))
	require.ErrorIs(t, startWatch(t, h, from).end(t), io.EOF)
	requireFired(t, h, map[sim.FaultType]int64{sim.FaultDropWatch: 1}, "a dropped watch")

	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultCutWatch, AfterEvents: 2}))
	require.NotErrorIs(t, startWatch(t, h, from).end(t), io.EOF, "cut mid-frame")
	requireFired(t, h, map[sim.FaultType]int64{sim.FaultDropWatch: 1, sim.FaultCutWatch: 1}, "a cut watch")

	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultStall, Match: "watch", AfterEvents: 2}))
	watchUntilGone(t, h, from, 2)
	requireFired(t, h, map[sim.FaultType]int64{sim.FaultDropWatch: 1, sim.FaultCutWatch: 1, sim.FaultStall: 1}, "a stalled watch")
}

func TestFiredCountsSplitWritesOnlyWhenSomethingIsWritten(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 2)
	// A watch from now in a quiet namespace writes no byte of body before its
	// client leaves: its split-writes fault never applied.
	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultSplitWrites, Match: "watch"}))
	watchUntilGone(t, h, "/api/v1/namespaces/quiet/pods?watch=1&resourceVersion="+rvq(h), 0)
	require.Empty(t, h.Server.Faults())
	requireFired(t, h, map[sim.FaultType]int64{}, "a split watch that wrote nothing")

	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultSplitWrites, Match: "list", Count: 2}))
	for range 2 {
		code, _ := do(t, h, "GET", "/api/v1/pods", "", nil)
		require.Equal(t, 200, code)
	}
	requireFired(t, h, map[sim.FaultType]int64{sim.FaultSplitWrites: 2}, "two split lists")
}

func TestFiredCountsActions(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	h.Server.Compact()
	h.Server.ExpireContinueTokens()
	h.Server.DropWatches(false)
	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.ActionDropWatches, LoseHistory: true}))
	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.ActionCompact}))
	requireFired(t, h, map[sim.FaultType]int64{sim.ActionCompact: 2, sim.ActionExpireContinue: 1, sim.ActionDropWatches: 2},
		"actions count when performed, by method or by InjectFault")
	require.Zero(t, h.Server.Stats().FaultsInjected, "actions take no request")
	h.Server.ResetStats()
	requireFired(t, h, map[sim.FaultType]int64{}, "after ResetStats")
}

func TestClearFaultsVoidsTakenFaults(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 2)
	for _, f := range []sim.Fault{
		{Type: sim.FaultDropWatch, AfterEvents: 4},
		{Type: sim.FaultCutWatch, AfterEvents: 4},
		{Type: sim.FaultStall, Match: "watch", AfterEvents: 4},
	} {
		t.Run(string(f.Type), func(t *testing.T) {
			require.NoError(t, h.Server.InjectFault(f))
			w := startWatch(t, h, "/api/v1/namespaces/demo/pods?watch=1&resourceVersion="+rvq(h))
			putPod(t, h, sim.Pod{Namespace: "demo", Name: "a-" + string(f.Type)})
			w.next(t)
			require.Empty(t, h.Server.Faults(), "the watch took the fault")
			h.Server.ClearFaults()
			for i := range 6 { // past AfterEvents: the voided fault does nothing
				putPod(t, h, sim.Pod{Namespace: "demo", Name: "b-" + string(f.Type), Restarts: int32(i)})
				require.Equal(t, "b-"+string(f.Type), w.next(t).name(), "event %d after ClearFaults", i)
			}
			requireFired(t, h, map[sim.FaultType]int64{}, "a fault cleared before its moment")
		})
	}
}

// readChunk reads one chunk of a chunked HTTP/1.1 body.
func readChunk(t *testing.T, br *bufio.Reader) []byte {
	t.Helper()
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
	require.NoError(t, err)
	buf := make([]byte, n+2)
	_, err = io.ReadFull(br, buf)
	require.NoError(t, err)
	return buf[:n]
}

func TestClearFaultsEndsSplitWrites(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 1)
	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultSplitWrites, Match: "watch"}))
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(h.URL, "http://"), wait)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(wait)))
	_, err = fmt.Fprintf(conn, "GET /api/v1/namespaces/demo/pods?watch=1&resourceVersion=%s HTTP/1.1\r\nHost: x\r\n\r\n", rvq(h))
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	for { // the headers
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		if line == "\r\n" {
			break
		}
	}
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "split"})
	var ev bytes.Buffer
	for !bytes.HasSuffix(ev.Bytes(), []byte("\n")) || !json.Valid(ev.Bytes()) {
		c := readChunk(t, br)
		require.LessOrEqual(t, len(c), 64, "split while the fault is live")
		ev.Write(c)
	}
	requireFired(t, h, map[sim.FaultType]int64{sim.FaultSplitWrites: 1}, "split")
	h.Server.ClearFaults()
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "whole"})
	c := readChunk(t, br)
	require.Greater(t, len(c), 64, "after ClearFaults the next event is written whole")
	require.True(t, json.Valid(c), "one whole event: %.80q", c)
	requireFired(t, h, map[sim.FaultType]int64{sim.FaultSplitWrites: 1}, "still one")
}

// A restart that ends a watch which had just taken a fault gives the fault
// back: it is meant for the next watch, and the client's next one gets it.
// Before, the fault was lost, and a test waiting for it to fire (kwatchtest's
// ExampleServer_CutWatch, when the informer's watch arrived between CutWatch
// and Restart) waited for ever.
func TestRestartGivesAnUnfiredWatchFaultBack(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 1)
	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultCutWatch}))
	first := startWatch(t, h, "/api/v1/namespaces/demo/pods?watch=1&resourceVersion="+rvq(h))
	require.Empty(t, h.Server.Faults(), "the open watch took the fault")

	h.Server.DropWatches(false)
	require.ErrorIs(t, first.end(t), io.EOF, "the restart ends the watch cleanly")
	require.Eventually(t, func() bool { return h.Server.Stats().ActiveWatches == 0 }, wait, pollEvery)
	require.Len(t, h.Server.Faults(), 1, "the fault is back in the queue")

	next := startWatch(t, h, "/api/v1/namespaces/demo/pods?watch=1&resourceVersion="+rvq(h))
	seedPods(t, h, "demo", 2)
	require.NotErrorIs(t, next.end(t), io.EOF, "the next watch is cut mid-frame")
	requireFired(t, h, map[sim.FaultType]int64{sim.FaultCutWatch: 1, sim.ActionDropWatches: 1}, "one cut after the restart")
}
