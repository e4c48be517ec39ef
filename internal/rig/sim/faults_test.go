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

func rvq(h *simkit.Harness) string { return strconv.FormatUint(h.Server.ResourceVersion(), 10) }

func TestFaultDropWatchEndsCleanlyAfterK(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultDropWatch, AfterEvents: 2}))
	seedPods(t, h, "demo", 5)
	w := startWatch(t, h, "/api/v1/pods?watch=1&resourceVersion=1")
	got := 0
	for range w.events {
		got++
	}
	require.ErrorIs(t, <-w.done, io.EOF, "clean end")
	require.Equal(t, 2, got)
	// The fault was used up: the next watch is normal.
	w2 := startWatch(t, h, "/api/v1/pods?watch=1&resourceVersion=1&timeoutSeconds=1")
	for range 5 {
		w2.next(t)
	}
}

// rawWatch sends a watch over HTTP/1.1 on a raw connection and returns everything
// read until the server closes the connection.
func rawWatch(t *testing.T, h *simkit.Harness, path string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(h.URL, "http://"), wait)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(wait)))
	_, err = fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path)
	require.NoError(t, err)
	b, err := io.ReadAll(conn)
	require.NoError(t, err, "the server closes the connection")
	return string(b)
}

func TestFaultCutWatchAbortsMidFrame(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 3)
	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultCutWatch, AfterEvents: 1}))
	raw := rawWatch(t, h, "/api/v1/namespaces/demo/pods?watch=1")
	_, body, ok := strings.Cut(raw, "\r\n\r\n")
	require.True(t, ok)
	require.NotContains(t, body, "\r\n0\r\n\r\n", "no final zero chunk")
	events := strings.SplitN(dechunk(t, body), "\n", 2)
	require.Len(t, events, 2, "%q", body)
	var ev wevent
	require.NoError(t, json.Unmarshal([]byte(events[0]), &ev), "the first event is whole")
	require.NotEmpty(t, events[1], "part of the second event was sent")
	var partial wevent
	require.Error(t, json.Unmarshal([]byte(events[1]), &partial), "the second frame is cut: %.80q", events[1])
}

// dechunk joins the chunks of a chunked HTTP/1.1 body that may end
// without its final zero chunk.
func dechunk(t *testing.T, body string) string {
	t.Helper()
	var out strings.Builder
	for body != "" {
		size, rest, ok := strings.Cut(body, "\r\n")
		require.True(t, ok, "chunk size line in %.40q", body)
		n, err := strconv.ParseInt(size, 16, 64)
		require.NoError(t, err)
		if n == 0 || int(n) > len(rest) {
			break
		}
		out.WriteString(rest[:n])
		body = strings.TrimPrefix(rest[n:], "\r\n")
	}
	return out.String()
}

func TestFaultStallKeepsConnectionOpen(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 3)
	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultStall, Match: "watch", AfterEvents: 1}))
	ctx, cancel := context.WithCancel(context.Background())
	req := h.NewRequest(t, "GET", "/api/v1/namespaces/demo/pods?watch=1", nil).WithContext(ctx)
	resp, err := h.Client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	dec := json.NewDecoder(resp.Body)
	var ev wevent
	require.NoError(t, dec.Decode(&ev))
	got := make(chan error, 1)
	go func() { got <- dec.Decode(&ev) }()
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "more"})
	require.Eventually(t, func() bool { return h.Server.Stats().ActiveWatches == 1 }, wait, pollEvery)
	select {
	case err := <-got:
		t.Fatalf("a stalled stream delivered something: %v %v", err, ev)
	default:
	}
	cancel() // the client goes away: the stream ends
	require.Error(t, <-got)
	require.Eventually(t, func() bool { return h.Server.Stats().ActiveWatches == 0 }, wait, pollEvery)

	// A stalled list: headers, then nothing until the client gives up.
	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultStall, Match: "list"}))
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	resp2, err := h.Client.Do(h.NewRequest(t, "GET", "/api/v1/pods", nil).WithContext(ctx2))
	require.NoError(t, err, "headers arrive")
	defer resp2.Body.Close()
	read := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(resp2.Body)
		read <- err
	}()
	select {
	case err := <-read:
		t.Fatalf("a stalled list completed: %v", err)
	case <-time.After(50 * time.Millisecond): // nothing came; a slow machine only makes this weaker
	}
	cancel2()
	require.Error(t, <-read, "the body never completes")
}

func TestFaultErrors(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	tests := []struct {
		code   int
		reason string
	}{{429, "TooManyRequests"}, {500, "InternalError"}, {503, "ServiceUnavailable"}}
	for _, tc := range tests {
		t.Run(strconv.Itoa(tc.code), func(t *testing.T) {
			require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultError, Match: "list", Code: tc.code, Count: 2, RetryAfterSeconds: 3}))
			for range 2 {
				req := h.NewRequest(t, "GET", "/api/v1/pods", nil)
				resp, err := h.Client.Do(req)
				require.NoError(t, err)
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.Equal(t, tc.code, resp.StatusCode)
				require.Equal(t, "3", resp.Header.Get("Retry-After"))
				st := decodeMap(t, body)
				require.Equal(t, tc.reason, st["reason"])
			}
			// Watches do not match a list fault; the third list succeeds.
			code, _ := do(t, h, "GET", "/api/v1/pods?watch=1&timeoutSeconds=1&resourceVersion="+rvq(h), "", nil)
			require.Equal(t, 200, code)
			code, _ = do(t, h, "GET", "/api/v1/pods", "", nil)
			require.Equal(t, 200, code)
		})
	}
}

func TestFaultSplitWrites(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 3)
	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultSplitWrites, Count: -1}))
	raw := rawWatch(t, h, "/api/v1/namespaces/demo/pods?watch=1&timeoutSeconds=1")
	_, body, _ := strings.Cut(raw, "\r\n\r\n")
	// Reassemble the chunks: many small ones, and the events survive intact.
	br := bufio.NewReader(strings.NewReader(body))
	var data bytes.Buffer
	chunks := 0
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		require.NoError(t, err)
		if n == 0 {
			break
		}
		require.LessOrEqual(t, n, int64(64))
		buf := make([]byte, n+2)
		_, err = io.ReadFull(br, buf)
		require.NoError(t, err)
		data.Write(buf[:n])
		chunks++
	}
	require.Greater(t, chunks, 30)
	dec := json.NewDecoder(&data)
	for range 3 {
		var ev wevent
		require.NoError(t, dec.Decode(&ev))
		require.Equal(t, "ADDED", ev.Type)
	}
	h.Server.ClearFaults()
	require.Empty(t, h.Server.Faults())
}

func TestFaultCompactAndDropWatches(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 3)
	old := rvq(h)
	w := startWatch(t, h, "/api/v1/pods?watch=1&resourceVersion="+old)
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "x"})
	require.Equal(t, "ADDED", w.next(t).Type)

	h.Server.Compact()
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "y"})
	require.Equal(t, "y", w.next(t).name(), "compaction leaves open watches alone")
	code, body := do(t, h, "GET", "/api/v1/pods?watch=1&resourceVersion="+old, "", nil)
	require.Equal(t, 200, code)
	require.Contains(t, string(body), `"code":410`)

	h.Server.DropWatches(false)
	require.ErrorIs(t, w.end(t), io.EOF, "drop-watches ends streams cleanly")
	recent := rvq(h)
	w2 := startWatch(t, h, "/api/v1/pods?watch=1&resourceVersion="+recent)
	h.Server.DropWatches(true)
	require.ErrorIs(t, w2.end(t), io.EOF)
	_, body = do(t, h, "GET", "/api/v1/pods?watch=1&resourceVersion="+strconv.Itoa(mustAtoi(t, recent)-1), "", nil)
	require.Contains(t, string(body), `"code":410`, "lost history forces a relist")
}

func mustAtoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

func TestFaultAdminEndpoint(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	code, body := do(t, h, "POST", "/sim/faults", "", []byte(`{"type":"error","match":"get","code":429,"count":1}`))
	require.Equal(t, 201, code, "%s", body)
	var rep sim.FaultReport
	require.NoError(t, json.Unmarshal(body, &rep))
	require.Len(t, rep.Pending, 1)
	require.Empty(t, rep.Fired, "queued, not fired")
	code, _ = do(t, h, "GET", "/api/v1/namespaces/default", "", nil)
	require.Equal(t, 429, code)
	code, body = do(t, h, "POST", "/sim/faults", "", []byte(`{"type":"bogus"}`))
	require.Equal(t, 400, code)
	require.Contains(t, string(body), `unknown fault type \"bogus\"`)
	code, _ = do(t, h, "POST", "/sim/faults", "", []byte(`{"type":"compact"}`))
	require.Equal(t, 201, code)
	code, body = do(t, h, "GET", "/sim/faults", "", nil)
	require.Equal(t, 200, code)
	require.JSONEq(t, `{"pending":[],"fired":{"error":1,"compact":1}}`, string(body))
	code, body = do(t, h, "GET", "/sim/stats", "", nil)
	require.Equal(t, 200, code)
	var st sim.Stats
	require.NoError(t, json.Unmarshal(body, &st))
	require.EqualValues(t, 1, st.ByResource["namespaces"].Get)
	require.EqualValues(t, 1, st.FaultsInjected, "one request took a fault")
	require.Equal(t, map[sim.FaultType]int64{sim.FaultError: 1, sim.ActionCompact: 1}, st.FaultsFired)
	code, _ = do(t, h, "DELETE", "/sim/faults", "", nil)
	require.Equal(t, 200, code)
	h.Server.ResetStats()
	require.Empty(t, h.Server.FiredFaults())
}

func TestSlowWatcherIsTerminated(t *testing.T) {
	h := simkit.Start(t, sim.Options{HistorySize: 50})
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "p"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := h.Client.Do(h.NewRequest(t, "GET", "/api/v1/pods?watch=1&resourceVersion="+rvq(h), nil).WithContext(ctx))
	require.NoError(t, err)
	defer resp.Body.Close()
	// Do not read while writing far more (20,000 events of about 3.5 KB: 70 MB)
	// than the socket buffers on both sides can hold, so the watcher is stuck
	// in a write long before the last event and the history moves on without it.
	const events = 20000
	for i := range events {
		putPod(t, h, sim.Pod{Namespace: "demo", Name: "p", Restarts: int32(i)})
	}
	// Reading lets the watcher finish its write and look for the next event,
	// which is gone: it is terminated and its stream ends cleanly.
	n := 0
	dec := json.NewDecoder(resp.Body)
	for {
		var ev wevent
		if err := dec.Decode(&ev); err != nil {
			require.ErrorIs(t, err, io.EOF, "the terminated stream ends cleanly")
			break
		}
		n++
	}
	require.Less(t, n, events, "the slow watcher did not get every event")
	require.Eventually(t, func() bool { return h.Server.Stats().TerminatedWatches == 1 }, wait, pollEvery)
}
