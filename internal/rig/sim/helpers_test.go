package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// wait is the generous bound for anything asynchronous: the machine is loaded.
const wait = 60 * time.Second

// capture reads a real-apiserver capture.
func capture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "real-apiserver", name))
	require.NoError(t, err)
	return b
}

func decodeMap(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "body: %.300s", b)
	return m
}

// do sends a request and returns the status and body.
func do(t *testing.T, h *simkit.Harness, method, path, accept string, body []byte, hdr ...string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req := h.NewRequest(t, method, path, r)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	resp, err := h.Client.Do(req.WithContext(ctx))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

func getMap(t *testing.T, h *simkit.Harness, path string) map[string]any {
	t.Helper()
	code, b := do(t, h, "GET", path, "", nil)
	require.Equal(t, 200, code, "GET %s: %s", path, b)
	return decodeMap(t, b)
}

// wevent is one decoded watch event.
type wevent struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

func (e wevent) name() string {
	md, _ := e.Object["metadata"].(map[string]any)
	s, _ := md["name"].(string)
	return s
}

func (e wevent) rv() string {
	md, _ := e.Object["metadata"].(map[string]any)
	s, _ := md["resourceVersion"].(string)
	return s
}

// watcher reads a watch stream in the background.
type watcher struct {
	resp   *http.Response
	events chan wevent
	done   chan error // the decode error that ended the stream (io.EOF = clean end)
	cancel context.CancelFunc
}

func startWatch(t *testing.T, h *simkit.Harness, path string, hdr ...string) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req := h.NewRequest(t, "GET", path, nil).WithContext(ctx)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := h.Client.Do(req)
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	require.Equal(t, 200, resp.StatusCode, "watch %s", path)
	w := &watcher{resp: resp, events: make(chan wevent, 100000), done: make(chan error, 1), cancel: cancel}
	go func() {
		dec := json.NewDecoder(resp.Body)
		for {
			var ev wevent
			if err := dec.Decode(&ev); err != nil {
				w.done <- err
				close(w.events)
				return
			}
			w.events <- ev
		}
	}()
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	return w
}

// next returns the next event, failing the test if none arrives in time.
func (w *watcher) next(t *testing.T) wevent {
	t.Helper()
	select {
	case ev, ok := <-w.events:
		if !ok {
			t.Fatalf("watch ended before the next event: %v", <-w.done)
		}
		return ev
	case <-time.After(wait):
		t.Fatalf("no watch event within %v", wait)
	}
	return wevent{}
}

// nextNonBookmark skips bookmarks.
func (w *watcher) nextNonBookmark(t *testing.T) wevent {
	t.Helper()
	for {
		if ev := w.next(t); ev.Type != "BOOKMARK" {
			return ev
		}
	}
}

// end waits for the stream to end and returns how it ended.
func (w *watcher) end(t *testing.T) error {
	t.Helper()
	for {
		select {
		case _, ok := <-w.events:
			if !ok {
				return <-w.done
			}
		case <-time.After(wait):
			t.Fatalf("watch did not end within %v", wait)
		}
	}
}

func putPod(t *testing.T, h *simkit.Harness, p sim.Pod) uint64 {
	t.Helper()
	rv, err := h.Server.PutPod(p)
	require.NoError(t, err)
	return rv
}

func seedPods(t *testing.T, h *simkit.Harness, ns string, n int) {
	t.Helper()
	for i := range n {
		putPod(t, h, sim.Pod{Namespace: ns, Name: fmt.Sprintf("worker-%d", i+1), Labels: map[string]string{"app": "worker"}})
	}
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func items(t *testing.T, list map[string]any) []map[string]any {
	t.Helper()
	raw, ok := list["items"].([]any)
	require.True(t, ok, "list has no items array: %v", keysOf(list))
	out := make([]map[string]any, len(raw))
	for i, it := range raw {
		out[i] = it.(map[string]any)
	}
	return out
}

func nameOf(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	s, _ := md["name"].(string)
	return s
}

func listMeta(list map[string]any) map[string]any {
	md, _ := list["metadata"].(map[string]any)
	return md
}

// pollEvery is the polling step of require.Eventually checks.
const pollEvery = 10 * time.Millisecond

func newListener(t *testing.T) (net.Listener, error) {
	t.Helper()
	return net.Listen("tcp", "127.0.0.1:0")
}

func timeAfter(d time.Duration) <-chan time.Time { return time.After(d) }

func strconvU(v uint64) string { return strconv.FormatUint(v, 10) }

// benchPause yields while a benchmark waits for its watchers to drain (benchmarks only).
func benchPause() { time.Sleep(time.Millisecond) }
