package informer

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/testutil"
)

// memSnapshotOptions are memOptions in StoreCompact, ListAuto and the
// default backoff, with a snapshot at path written when Run returns.
func memSnapshotOptions(t *testing.T, n *testutil.MemNet, path string, logs *testutil.Buffer) Options[*testPod] {
	opts := memOptions(t, n, "api:80")
	opts.ListMode, opts.Backoff, opts.Store = ListAuto, Backoff{}, StoreCompact
	opts.Snapshot = &SnapshotOptions{Path: path, Interval: time.Hour}
	if logs != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	return opts
}

// runFor runs a new informer with opts for d of the bubble's time, stops
// it and waits for Run to return (and so for its last snapshot write).
func runFor(t *testing.T, opts Options[*testPod], d time.Duration) *Informer[*testPod] {
	inf, err := New(opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	time.Sleep(d)
	synctest.Wait()
	cancel()
	require.NoError(t, <-done)
	return inf
}

// TestSnapshotFromAnotherClusterAtTheSameAddress: cluster A's snapshot is
// not resumed against cluster B served at the same address later, though
// B's resourceVersion is past the snapshot's (so B confirms it): the
// snapshot names A's kube-system namespace UID. The informer logs the
// refusal, lists, and its store is B's.
func TestSnapshotFromAnotherClusterAtTheSameAddress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &testutil.MemNet{}
		path := filepath.Join(t.TempDir(), "pods.snap")
		a := startMemSim(t, n, "api:80", sim.Options{Seed: 1})
		putPods(t, a.Server, 0, 10)
		first := runFor(t, memSnapshotOptions(t, n, path, nil), time.Minute)
		require.EqualValues(t, 1, first.Stats().SnapshotWrites)
		a.stop()

		b := startMemSim(t, n, "api:80", sim.Options{Seed: 2})
		putPods(t, b.Server, 100, 130) // B's RV runs past A's snapshot
		require.Greater(t, b.Server.ResourceVersion(), a.Server.ResourceVersion())
		logs := &testutil.Buffer{}
		inf, err := New(memSnapshotOptions(t, n, path, logs))
		require.NoError(t, err)
		start(t, inf)
		time.Sleep(time.Minute)
		synctest.Wait()
		require.False(t, inf.Stats().Restored, "another cluster's snapshot is not loaded")
		require.EqualValues(t, 1, inf.Stats().Relists, "it listed")
		require.Equal(t, serverState(t, b.Server), storeRVs(inf), "the store is cluster B's")
		require.Contains(t, logs.String(), "snapshot is for another server")
	})
}

// TestSnapshotSameClusterResumes: a restart against the same cluster (a
// new API server process with the same data) resumes from the snapshot,
// with one GET of the kube-system namespace per Run.
func TestSnapshotSameClusterResumes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &testutil.MemNet{}
		path := filepath.Join(t.TempDir(), "pods.snap")
		srv, err := sim.New(sim.Options{})
		require.NoError(t, err)
		gets := &countingHandler{next: srv.Handler(), path: "/api/v1/namespaces/kube-system"}
		memServe(t, n, "api:80", gets)
		putPods(t, srv, 0, 10)
		runFor(t, memSnapshotOptions(t, n, path, nil), time.Minute)
		putPods(t, srv, 10, 12)
		inf := runFor(t, memSnapshotOptions(t, n, path, nil), time.Minute)
		require.True(t, inf.Stats().Restored)
		require.Zero(t, inf.Stats().Relists)
		require.Equal(t, serverState(t, srv), storeRVs(inf))
		require.Equal(t, 2, gets.count(), "one GET per Run")
	})
}

// TestSnapshotWhenTheClusterCannotBeIdentified: when the GET of the
// kube-system namespace is forbidden (no RBAC for it) or the cluster has
// none, the informer can tell one cluster behind the address from
// another only by SnapshotOptions.Cluster: without it snapshots are off
// for the Run (logged with the remedy; nothing loaded, nothing written),
// with it they work under the host and that name. A GET that fails for a
// while is retried.
func TestSnapshotWhenTheClusterCannotBeIdentified(t *testing.T) {
	tests := []struct {
		name     string
		answers  []int // the kube-system GET's first answers; then the namespace
		cluster  string
		restored bool
		log      string
	}{
		{"forbidden", []int{403, 403}, "", false, "get on namespaces/kube-system"},
		{"no kube-system", []int{404, 404}, "", false, "get on namespaces/kube-system"},
		{"forbidden, with a cluster name", []int{403, 403}, "blue", true, "cluster=blue"},
		{"unavailable for a while", []int{503, 503}, "", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := &testutil.MemNet{}
				path := filepath.Join(t.TempDir(), "pods.snap")
				srv, err := sim.New(sim.Options{})
				require.NoError(t, err)
				h := &countingHandler{next: srv.Handler(), path: "/api/v1/namespaces/kube-system", answers: tt.answers}
				memServe(t, n, "api:80", h)
				putPods(t, srv, 0, 10)
				logs := &testutil.Buffer{}
				opts := memSnapshotOptions(t, n, path, logs)
				opts.Snapshot.Cluster = tt.cluster
				runFor(t, opts, time.Minute)
				opts = memSnapshotOptions(t, n, path, logs)
				opts.Snapshot.Cluster = tt.cluster
				inf := runFor(t, opts, time.Minute)
				require.Equal(t, tt.restored, inf.Stats().Restored)
				require.Equal(t, serverState(t, srv), storeRVs(inf))
				require.Contains(t, logs.String(), tt.log)
				if !tt.restored {
					_, err := os.Stat(path)
					require.ErrorIs(t, err, os.ErrNotExist, "no snapshot is written that could not be checked")
					require.Zero(t, inf.Stats().SnapshotWrites)
				}
			})
		})
	}
}

// countingHandler counts the GETs of one path and answers the first ones
// with the given status codes.
type countingHandler struct {
	next    http.Handler
	path    string
	mu      sync.Mutex
	answers []int // guarded by mu
	n       int   // guarded by mu
}

func (h *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == h.path {
		h.mu.Lock()
		h.n++
		code := 0
		if len(h.answers) > 0 {
			code, h.answers = h.answers[0], h.answers[1:]
		}
		h.mu.Unlock()
		if code != 0 {
			answer(code, statusJSON(code, http.StatusText(code)))(w, r)
			return
		}
	}
	h.next.ServeHTTP(w, r)
}

func (h *countingHandler) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}
