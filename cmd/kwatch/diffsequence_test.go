package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/diff"
	"github.com/kwatch/kwatch/internal/jsonpatch"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// patchReplica rebuilds the server's objects from "kwatch -o json --diff"
// alone: each ADDED event's object, then each MODIFIED event's patch
// applied to the version the replica holds (never the printed object), and
// each DELETED. It checks on the way that every patched version equals the
// object printed beside the patch.
type patchReplica struct {
	mu       sync.Mutex
	objects  map[string]map[string]any
	patched  int // MODIFIED events replayed
	relisted int // events marked as computed after a relist
	err      error
	changed  chan struct{} // closed and replaced on every event
	ended    chan struct{}
}

func replayPatches(r io.Reader) *patchReplica {
	rp := &patchReplica{objects: map[string]map[string]any{}, changed: make(chan struct{}), ended: make(chan struct{})}
	go func() { // ends when the process closes its stdout
		defer close(rp.ended)
		dec := json.NewDecoder(r)
		dec.UseNumber()
		for {
			var ev struct {
				Type     string         `json:"type"`
				Object   map[string]any `json:"object"`
				Patch    []rawOp        `json:"patch"`
				Relisted bool           `json:"relisted"`
			}
			if err := dec.Decode(&ev); err != nil {
				if err != io.EOF {
					rp.fail(err)
				}
				return
			}
			if err := rp.apply(ev.Type, ev.Object, ev.Patch, ev.Relisted); err != nil {
				rp.fail(err)
				return
			}
		}
	}()
	return rp
}

// rawOp is a printed patch operation, its value decoded with UseNumber.
type rawOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

func (rp *patchReplica) apply(typ string, obj map[string]any, patch []rawOp, relisted bool) error {
	md, _ := obj["metadata"].(map[string]any)
	key := fmt.Sprint(md["namespace"], "/", md["name"])
	rp.mu.Lock()
	defer rp.mu.Unlock()
	defer rp.notifyLocked()
	if relisted {
		rp.relisted++
	}
	switch typ {
	case "ADDED":
		rp.objects[key] = obj
	case "DELETED":
		delete(rp.objects, key)
	case "MODIFIED":
		prev, ok := rp.objects[key]
		if !ok {
			return fmt.Errorf("MODIFIED %s before any ADDED", key)
		}
		ops := make([]jsonpatch.Op, len(patch))
		for i, p := range patch {
			ops[i] = jsonpatch.Op{Op: p.Op, Path: p.Path, Value: p.Value}
		}
		got, err := jsonpatch.Apply(prev, ops)
		if err != nil {
			return fmt.Errorf("MODIFIED %s: %w", key, err)
		}
		if !reflect.DeepEqual(got, any(obj)) {
			return fmt.Errorf("MODIFIED %s: the patch applied to the version before gives\n%v\nnot the object printed\n%v", key, got, obj)
		}
		rp.objects[key] = obj
		rp.patched++
	default:
		return fmt.Errorf("event type %q", typ)
	}
	return nil
}

func (rp *patchReplica) fail(err error) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.err == nil {
		rp.err = err
	}
	rp.notifyLocked()
}

func (rp *patchReplica) notifyLocked() {
	close(rp.changed)
	rp.changed = make(chan struct{})
}

// waitUntil waits, without polling, until cond holds of the replica.
func (rp *patchReplica) waitUntil(t *testing.T, what string, cond func(objects map[string]map[string]any) bool) {
	t.Helper()
	timeout := time.After(wait)
	for {
		rp.mu.Lock()
		err, ok, ch := rp.err, cond(rp.objects), rp.changed
		rp.mu.Unlock()
		require.NoError(t, err, "replaying the printed patches")
		if ok {
			return
		}
		select {
		case <-ch:
		case <-rp.ended:
			t.Fatalf("%s: the output ended first", what)
		case <-timeout:
			t.Fatalf("%s: not within %s", what, wait)
		}
	}
}

// serverObjects are the simulator's pods, decoded as the replica decodes.
func serverObjects(t *testing.T, srv *sim.Server) map[string]map[string]any {
	t.Helper()
	_, objs, err := srv.Snapshot("pods")
	require.NoError(t, err)
	out := make(map[string]map[string]any, len(objs))
	for k, o := range objs {
		m, err := diff.Decode(o.JSON)
		require.NoError(t, err)
		out[k] = m
	}
	return out
}

// TestDiffPatchesReplayToTheServer checks --diff's promise: each printed
// change is the difference from the version printed before it for that
// object, so that the first ADDED and the patches after it, and nothing
// else, rebuild every object exactly (managedFields and resourceVersions
// included), through churn, a server restart, a cut stream, lost history
// (410 and a relist, whose changes are marked) and deletes made while
// kwatch was disconnected.
func TestDiffPatchesReplayToTheServer(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	srv := h.Server
	journal, stopJournal := srv.Journal("pods")
	defer stopJournal()
	_, err := srv.LoadPods(60, 3, 11)
	require.NoError(t, err)
	p := start(t, testEnv(t), "pods", "-A", "-o", "json", "--diff", "--kubeconfig", h.Kubeconfig(t))
	rp := replayPatches(p.stdout)
	rp.waitUntil(t, "initial list printed", func(got map[string]map[string]any) bool { return len(got) == 60 })

	ctx, cancel := context.WithCancel(context.Background())
	churn, err := sim.NewChurn(srv, sim.ChurnOptions{Namespaces: 3, Rate: 200, Seed: 5})
	require.NoError(t, err)
	var churnErr error
	churnDone := make(chan struct{})
	go func() { defer close(churnDone); churnErr = churn.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-churnDone })
	// A server restart that keeps its history (resume), then a certain
	// relist. (injectFaults' split-writes fault did not fire within the
	// bound once under load: left out here, TestReplayAfterFaults has it.)
	watches := srv.Stats().ByResource["pods"].Watch
	srv.DropWatches(false)
	eventually(t, "kwatch watches again", func() bool {
		return srv.Stats().ByResource["pods"].Watch > watches && srv.Stats().ActiveWatches > 0
	})
	relistWhileStopped(t, p, srv, journal)
	cancel()
	<-churnDone
	require.NoError(t, churnErr)

	want := serverObjects(t, srv)
	rp.waitUntil(t, "the patches replay to the server's objects", func(got map[string]map[string]any) bool {
		return reflect.DeepEqual(got, want)
	})
	rp.mu.Lock()
	patched, relisted := rp.patched, rp.relisted
	rp.mu.Unlock()
	require.Positive(t, patched, "changes were replayed from their patches")
	// How many of the changes the relist computed are MODIFIED ones (the
	// ones marked) depends on what the churn did while kwatch was stopped;
	// the marks themselves are TestDiffSink's and TestRelistUpdatesAreTold's.
	t.Logf("%d objects rebuilt from %d patches (%d events computed after a relist)", len(want), patched, relisted)

	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	<-rp.ended
	require.Equal(t, 0, p.wait(), "stderr: %s", p.stderr.String())
}

// relistWhileStopped makes a relist certain: kwatch is stopped (SIGSTOP)
// while the server changes and deletes pods, forgets its history and
// drops the watches, so that kwatch, continued, resumes from a
// resourceVersion that is gone (410) and must relist: every change it
// then prints is computed.
func relistWhileStopped(t *testing.T, p *proc, srv *sim.Server, journal func() []sim.Change) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGSTOP))
	stopped := true
	defer func() {
		if stopped {
			_ = p.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	n := len(journal())
	eventually(t, "the server changes while kwatch is stopped", func() bool { return len(journal()) >= n+100 })
	deleteSome(t, srv, 5)
	srv.Compact()
	srv.DropWatches(true)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGCONT))
	stopped = false
	watches := srv.Stats().ByResource["pods"].Watch
	eventually(t, "kwatch watches again", func() bool {
		return srv.Stats().ByResource["pods"].Watch > watches && srv.Stats().ActiveWatches > 0
	})
}
