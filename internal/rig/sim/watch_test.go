package sim_test

import (
	"bufio"
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

func TestWatchFromRVSeesEveryChange(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 2)
	from := h.Server.ResourceVersion()
	w := startWatch(t, h, "/api/v1/namespaces/demo/pods?watch=1&resourceVersion="+strconv.FormatUint(from, 10))
	addRV := putPod(t, h, sim.Pod{Namespace: "demo", Name: "temp"})
	modRV := putPod(t, h, sim.Pod{Namespace: "demo", Name: "temp", Labels: map[string]string{"stage": "canary"}})
	delRV, err := h.Server.Delete("pods", "demo", "temp")
	require.NoError(t, err)
	want := []struct {
		typ string
		rv  uint64
	}{{"ADDED", addRV}, {"MODIFIED", modRV}, {"DELETED", delRV}}
	for _, wnt := range want {
		ev := w.next(t)
		require.Equal(t, wnt.typ, ev.Type)
		require.Equal(t, "temp", ev.name())
		require.Equal(t, strconv.FormatUint(wnt.rv, 10), ev.rv(), "%s event RV", wnt.typ)
		require.Equal(t, "Pod", ev.Object["kind"])
	}
}

func TestWatchWithoutRVStartsWithState(t *testing.T) {
	for _, rv := range []string{"", "0"} {
		t.Run("rv="+rv, func(t *testing.T) {
			h := simkit.Start(t, sim.Options{})
			seedPods(t, h, "demo", 3)
			w := startWatch(t, h, "/api/v1/namespaces/demo/pods?watch=true&resourceVersion="+rv)
			for i := 1; i <= 3; i++ {
				ev := w.next(t)
				require.Equal(t, "ADDED", ev.Type)
				require.Equal(t, fmt.Sprintf("worker-%d", i), ev.name())
			}
			putPod(t, h, sim.Pod{Namespace: "demo", Name: "live"})
			ev := w.next(t)
			require.Equal(t, "ADDED", ev.Type)
			require.Equal(t, "live", ev.name())
		})
	}
}

func TestWatchTooOldIsErrorEvent(t *testing.T) {
	h := simkit.Start(t, sim.Options{HistorySize: 5})
	seedPods(t, h, "demo", 20)
	code, body := do(t, h, "GET", "/api/v1/namespaces/demo/pods?watch=1&resourceVersion=3", "", nil)
	require.Equal(t, 200, code, "a too-old watch is a 200 stream")
	require.JSONEq(t, strings.TrimSpace(string(capture(t, "watch-410-too-old-rv.jsonl"))), strings.TrimSpace(string(body)))
}

func TestWatchBookmarks(t *testing.T) {
	h := simkit.Start(t, sim.Options{BookmarkInterval: 20 * time.Millisecond})
	seedPods(t, h, "demo", 1)
	rv := h.Server.ResourceVersion()
	w := startWatch(t, h, "/api/v1/namespaces/demo/pods?watch=1&allowWatchBookmarks=true&resourceVersion="+strconv.FormatUint(rv, 10))
	ev := w.next(t)
	require.Equal(t, "BOOKMARK", ev.Type)
	require.Equal(t, strconv.FormatUint(rv, 10), ev.rv())
	var real wevent
	for _, line := range strings.Split(string(capture(t, "watch-http1-raw-chunked.txt")), "\n") {
		if strings.Contains(line, `"BOOKMARK"`) {
			require.NoError(t, json.Unmarshal([]byte(line), &real))
			break
		}
	}
	require.ElementsMatch(t, keysOf(real.Object), keysOf(ev.Object), "bookmark object fields")
	require.Equal(t, real.Object["spec"], ev.Object["spec"])
}

func TestWatchTimeoutEndsCleanly(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	w := startWatch(t, h, "/api/v1/pods?watch=1&timeoutSeconds=1&resourceVersion="+strconv.FormatUint(h.Server.ResourceVersion(), 10))
	require.ErrorIs(t, w.end(t), io.EOF, "a timed-out watch ends with the final chunk")
}

func TestWatchStreamingList(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 3)
	listRV := h.Server.ResourceVersion()
	w := startWatch(t, h, "/api/v1/namespaces/demo/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
	for range 3 {
		require.Equal(t, "ADDED", w.next(t).Type)
	}
	ev := w.next(t)
	require.Equal(t, "BOOKMARK", ev.Type)
	require.Equal(t, strconv.FormatUint(listRV, 10), ev.rv())
	lines := strings.Split(strings.TrimSpace(string(capture(t, "watch-streaming-list.jsonl"))), "\n")
	var real wevent
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &real))
	gotMD, realMD := ev.Object["metadata"].(map[string]any), real.Object["metadata"].(map[string]any)
	require.Equal(t, realMD["annotations"], gotMD["annotations"])
	require.ElementsMatch(t, keysOf(real.Object), keysOf(ev.Object))

	code, body := do(t, h, "GET", "/api/v1/namespaces/demo/pods?watch=1&sendInitialEvents=true", "", nil)
	require.Equal(t, 422, code)
	require.JSONEq(t, string(capture(t, "status-sendinitialevents-without-rvm.json")), string(body))
}

func TestWatchSelectorMoves(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "p", Labels: map[string]string{"app": "other"}})
	rv := h.Server.ResourceVersion()
	w := startWatch(t, h, "/api/v1/namespaces/demo/pods?watch=1&labelSelector=app%3Dweb&resourceVersion="+strconv.FormatUint(rv, 10))
	in := putPod(t, h, sim.Pod{Namespace: "demo", Name: "p", Labels: map[string]string{"app": "web"}})
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "p", Labels: map[string]string{"app": "web", "x": "y"}})
	out := putPod(t, h, sim.Pod{Namespace: "demo", Name: "p", Labels: map[string]string{"app": "other"}})
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "p", Labels: map[string]string{"app": "other2"}})
	tests := []struct {
		typ, rv, app string
	}{
		{"ADDED", strconv.FormatUint(in, 10), "web"},
		{"MODIFIED", strconv.FormatUint(in+1, 10), "web"},
		{"DELETED", strconv.FormatUint(out, 10), "web"},
	}
	for _, tc := range tests {
		ev := w.next(t)
		require.Equal(t, tc.typ, ev.Type)
		require.Equal(t, tc.rv, ev.rv())
		labels := ev.Object["metadata"].(map[string]any)["labels"].(map[string]any)
		require.Equal(t, tc.app, labels["app"], "%s carries the state inside the selector", tc.typ)
	}
	// Field selectors move objects too.
	w2 := startWatch(t, h, "/api/v1/pods?watch=1&fieldSelector=status.phase%3DRunning&resourceVersion="+strconv.FormatUint(h.Server.ResourceVersion(), 10))
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "q", NodeName: "node-1"})
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "q", NodeName: "node-1", Phase: "Succeeded"})
	require.Equal(t, "ADDED", w2.next(t).Type)
	require.Equal(t, "DELETED", w2.next(t).Type)
}

// TestWatchChunkedFraming checks HTTP/1.1 framing byte by byte: one chunk per event
// and the zero chunk at the end, as in watch-http1-raw-chunked.txt.
func TestWatchChunkedFraming(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "temp"})
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(h.URL, "http://"), wait)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(wait)))
	_, err = fmt.Fprintf(conn, "GET /api/v1/namespaces/demo/pods?watch=1&timeoutSeconds=1 HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "HTTP/1.1 200 OK\r\n", status)
	var headers []string
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		if line == "\r\n" {
			break
		}
		headers = append(headers, strings.TrimSpace(line))
	}
	require.Contains(t, headers, "Transfer-Encoding: chunked")
	require.Contains(t, headers, "Content-Type: application/json")
	var sizes []int64
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		require.NoError(t, err, "chunk size line %q", line)
		sizes = append(sizes, n)
		if n == 0 {
			break
		}
		chunk := make([]byte, n+2)
		_, err = io.ReadFull(br, chunk)
		require.NoError(t, err)
		require.True(t, strings.HasSuffix(string(chunk), "}\n\r\n"), "a chunk holds one whole event line")
		var ev wevent
		require.NoError(t, json.Unmarshal(chunk[:n], &ev))
		require.Equal(t, "ADDED", ev.Type)
	}
	require.Len(t, sizes, 2, "one event chunk, then the zero chunk")
}
