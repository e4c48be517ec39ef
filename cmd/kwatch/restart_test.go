package main

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// served is an in-process simulator on an address the test chose, so that
// another one can take the same address once it stops: a server restart
// as kwatch sees it. simkit.Start cannot do that, it always picks a port.
type served struct {
	srv    *sim.Server
	addr   string
	cancel context.CancelFunc
	done   chan error // Serve's result, sent once
	once   sync.Once  // stop's body runs once: from the test and from Cleanup
	err    error      // Serve's result, or a shutdown that did not finish; set in once
}

// serveAt serves srv on addr ("127.0.0.1:0" picks a port) until stop or
// the end of the test. Listening is retried for a while: the address of a
// simulator that just stopped is free again, and the retry only absorbs a
// moment in which the kernel has not yet let it go.
func serveAt(t *testing.T, srv *sim.Server, addr string) *served {
	t.Helper()
	var ln net.Listener
	eventually(t, "listen on "+addr, func() bool {
		var err error
		ln, err = net.Listen("tcp", addr)
		return err == nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{srv: srv, addr: ln.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- srv.Serve(ctx, ln) }() // waited for by stop
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("simulator at %s: %v", s.addr, err)
		}
	})
	return s
}

// stop shuts the server down, ending its watches and closing its
// connections, and waits for Serve to return.
func (s *served) stop() error {
	s.once.Do(func() {
		s.cancel()
		select {
		case s.err = <-s.done:
		case <-time.After(wait):
			s.err = fmt.Errorf("Serve did not return within %s", wait)
		}
	})
	return s.err
}

// putPods writes pods name-000... into namespace ns; restarts makes their
// content (and so their resourceVersion) change on every call.
func putPods(t *testing.T, srv *sim.Server, ns, name string, n int, restarts int32) {
	t.Helper()
	for i := range n {
		_, err := srv.PutPod(sim.Pod{Namespace: ns, Name: fmt.Sprintf("%s-%03d", name, i), NodeName: "node-1", Restarts: restarts})
		require.NoError(t, err)
	}
}

// TestReplayAfterRestartBehind restarts the server kwatch watches on the
// same address with fewer, partly different pods and a resourceVersion
// counter far behind what kwatch last saw (a server restored to an older
// state). kwatch must not resume at its now-future RV and wait there for
// ever: its confirming list gets 504 ResourceVersionTooLarge, it relists,
// and the printed events, replayed, must equal the new server's pods,
// with a DELETED event for every pod only the old server had.
func TestReplayAfterRestartBehind(t *testing.T) {
	oldSrv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	old := serveAt(t, oldSrv, "127.0.0.1:0")
	putPods(t, oldSrv, "keep", "shared", 60, 0)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kc, sim.KubeconfigBytes("http://"+old.addr, nil, ""), 0o600))

	p := start(t, testEnv(t), "pods", "-A", "-w", "-o", "json", "--output-watch-events", "--kubeconfig", kc)
	rp := replay(p.stdout)
	rp.waitUntil(t, "initial list replayed", func(got map[string]string, _ map[string]int) bool { return len(got) == 60 })

	// Changes kwatch sees on its watch: churned pods of its own (created,
	// changed, deleted) and every shared pod changed once more.
	churn, err := sim.NewChurn(oldSrv, sim.ChurnOptions{Pods: 40, Namespaces: 2, Events: 300, Seed: 11})
	require.NoError(t, err)
	require.NoError(t, churn.Run(context.Background()), "churn (bounded by Events, run on this goroutine)")
	putPods(t, oldSrv, "keep", "shared", 60, 1)
	oldPods := serverPods(t, oldSrv)
	rp.waitUntil(t, "the old server's pods replayed", func(got map[string]string, _ map[string]int) bool {
		return maps.Equal(got, oldPods)
	})
	deletesBefore := rp.deletes()

	// The restored server: the same address, the shared pods (other
	// versions of them) and new ones, and a counter that starts again.
	// Its pods are in place before it serves, as a restored server's are.
	newSrv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	putPods(t, newSrv, "keep", "shared", 60, 7)
	putPods(t, newSrv, "fresh", "pod", 30, 0)
	require.Less(t, newSrv.ResourceVersion(), oldSrv.ResourceVersion(), "precondition: the new server is behind kwatch")
	require.NoError(t, old.stop(), "stopping the old server")
	serveAt(t, newSrv, old.addr)

	newPods := serverPods(t, newSrv)
	require.Len(t, newPods, 90)
	rp.waitUntil(t, "printed events replay to the new server's pods", func(got map[string]string, _ map[string]int) bool {
		return maps.Equal(got, newPods)
	})
	deletes := rp.deletes()
	var goneCount int
	for key := range oldPods {
		if _, kept := newPods[key]; !kept {
			goneCount++
			require.Greater(t, deletes[key], deletesBefore[key], "a DELETED event for %s, which only the old server had", key)
		}
	}
	require.Positive(t, goneCount, "precondition: some pods exist only on the old server")
	require.Equal(t, len(oldPods)-60, goneCount, "precondition: the churned pods exist only on the old server")

	// kwatch watches the new server from the new server's RV: a change
	// made now is printed.
	_, err = newSrv.PutPod(sim.Pod{Namespace: "fresh", Name: "pod-late"})
	require.NoError(t, err)
	newPods = serverPods(t, newSrv)
	rp.waitUntil(t, "a change on the new server replayed", func(got map[string]string, _ map[string]int) bool {
		return maps.Equal(got, newPods)
	})

	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	<-rp.ended
	require.Equal(t, 0, p.wait(), "stderr: %s", p.stderr.String())
	_, _, err = rp.snapshot()
	require.NoError(t, err, "the output stays a stream of whole JSON objects to the end")
}
