package sim_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

func TestWatchAheadWaitsSilently(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	ahead := h.Server.ResourceVersion() + 2
	w := startWatch(t, h, "/api/v1/namespaces/demo/pods?watch=1&resourceVersion="+strconv.FormatUint(ahead, 10))
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "a"}) // namespace demo, then pod a: both at or below ahead
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "b"})
	ev := w.next(t)
	require.Equal(t, "b", ev.name(), "events up to the requested RV are not sent")
}

func TestListWaitsForRVBriefly(t *testing.T) {
	h := simkit.Start(t, sim.Options{TooLargeWait: wait})
	next := h.Server.ResourceVersion() + 1
	done := make(chan int, 1)
	req := h.NewRequest(t, "GET", "/api/v1/pods?resourceVersion="+strconv.FormatUint(next, 10), nil)
	go func() { // no require here: not the test goroutine
		resp, err := h.Client.Do(req)
		if err != nil {
			done <- -1
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	require.Eventually(t, func() bool { return h.Server.Stats().ByResource["pods"].List == 1 }, wait, pollEvery)
	putPod(t, h, sim.Pod{Namespace: "default", Name: "p"})
	select {
	case code := <-done:
		require.Equal(t, 200, code, "served once the server reached the RV")
	case <-time.After(wait):
		t.Fatal("list did not return")
	}

	h2 := simkit.Start(t, sim.Options{TooLargeWait: time.Millisecond})
	code, body := do(t, h2, "GET", "/api/v1/pods?resourceVersion=1000", "", nil)
	require.Equal(t, 504, code)
	st := decodeMap(t, body)
	require.Equal(t, "Timeout", st["reason"])
	cause := st["details"].(map[string]any)["causes"].([]any)[0].(map[string]any)
	require.Equal(t, "ResourceVersionTooLarge", cause["reason"])
}

func TestWatchPaths(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 3)
	w := startWatch(t, h, "/api/v1/namespaces/demo/pods/worker-2?watch=1")
	require.Equal(t, "worker-2", w.next(t).name(), "a watch on one object")
	w2 := startWatch(t, h, "/api/v1/watch/namespaces/demo/pods?fieldSelector=metadata.name%3Dworker-3")
	require.Equal(t, "worker-3", w2.next(t).name(), "the legacy /watch/ path")
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "worker-2", Restarts: 1})
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "worker-3", Restarts: 1})
	ev := w.next(t)
	require.Equal(t, "MODIFIED", ev.Type)
	require.Equal(t, "worker-2", ev.name())
}

func TestClusterScoped(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	code, body := do(t, h, "POST", "/api/v1/nodes", "", []byte(`{"metadata":{"name":"node-1","labels":{"zone":"a"}},"spec":{"unschedulable":true}}`))
	require.Equal(t, 201, code, "%s", body)
	require.NotContains(t, decodeMap(t, body)["metadata"], "namespace")
	node := getMap(t, h, "/api/v1/nodes/node-1")
	require.Equal(t, "Node", node["kind"])
	list := getMap(t, h, "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue")
	require.Len(t, items(t, list), 1)
	ns := getMap(t, h, "/api/v1/namespaces/default")
	require.Equal(t, "default", ns["metadata"].(map[string]any)["labels"].(map[string]any)["kubernetes.io/metadata.name"])
	code, _ = do(t, h, "GET", "/api/v1/namespaces/default/nodes", "", nil)
	require.Equal(t, 404, code, "nodes are not namespaced")
	code, _ = do(t, h, "GET", "/api/v1/pods/x", "", nil)
	require.Equal(t, 404, code, "a pod needs its namespace")
}
