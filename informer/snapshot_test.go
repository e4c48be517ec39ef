package informer

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/internal/rig/testutil"
)

// snapshotOptions are simOptions in StoreCompact with a snapshot at path.
func snapshotOptions(t *testing.T, url, path string) Options[*testPod] {
	opts := simOptions(t, url, ListAuto)
	opts.Store = StoreCompact
	opts.Snapshot = &SnapshotOptions{Path: path, Interval: time.Hour} // only the write at the end of Run
	return opts
}

// runUntilSynced runs a new informer with opts until it has synced, stops
// it, and returns it and its handler's calls.
func runAndStop(t *testing.T, opts Options[*testPod]) *Informer[*testPod] {
	inf, err := New(opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	require.True(t, inf.WaitForSync(ctxTimeout(t)))
	cancel()
	require.NoError(t, <-done)
	return inf
}

func putPods(t *testing.T, srv *sim.Server, from, to int) {
	for i := from; i < to; i++ {
		_, err := srv.PutPod(sim.Pod{Namespace: "ns", Name: fmt.Sprintf("p-%d", i)})
		require.NoError(t, err)
	}
}

// TestSnapshotRestartResumesWithoutList: a restarted informer loads its
// snapshot, resumes the watch from its RV without a list, and when it
// reports synced its store already holds the changes made while it was
// down, deletes included.
func TestSnapshotRestartResumesWithoutList(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	putPods(t, h.Server, 0, 20)
	path := filepath.Join(t.TempDir(), "pods.snap")
	first := runAndStop(t, snapshotOptions(t, h.URL, path))
	require.EqualValues(t, 1, first.Stats().SnapshotWrites, "written once, when Run returned")

	// While it is down: an update, a delete, a create.
	_, err := h.Server.PutPod(sim.Pod{Namespace: "ns", Name: "p-1", Restarts: 3})
	require.NoError(t, err)
	_, err = h.Server.Delete("pods", "ns", "p-2")
	require.NoError(t, err)
	putPods(t, h.Server, 20, 21)

	inf, err := New(snapshotOptions(t, h.URL, path))
	require.NoError(t, err)
	rec := &recorderT{}
	_, err = inf.AddHandler(rec, HandlerOptions{Delivery: Ordered})
	require.NoError(t, err)
	start(t, inf)
	require.True(t, inf.WaitForSync(ctxTimeout(t)))
	require.Equal(t, serverState(t, h.Server), storeRVs(inf), "synced means caught up with the server as of the restart")
	st := inf.Stats()
	require.True(t, st.Restored)
	require.Zero(t, st.Relists, "no list: the watch resumed from the snapshot")
	require.Eventually(t, func() bool { return len(rec.get()) >= 23 }, waitLong, tick)
	calls := strings.Join(rec.get()[20:], ";")
	require.Contains(t, calls, "delete ns/p-2@")
	require.Contains(t, calls, "add ns/p-20@")
	require.Contains(t, calls, "update ns/p-1@")
	for _, c := range rec.get()[:20] {
		require.Contains(t, c, "initial", "the snapshot's objects are the initial list")
	}
}

// TestSnapshotOlderThanHistoryRelists: a snapshot older than the server's
// history gets a 410 and a list; objects deleted meanwhile are delivered as
// deletes with finalStateUnknown. In a bubble, so the handler's calls are
// counted exactly once everything is idle, not polled for.
func TestSnapshotOlderThanHistoryRelists(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &testutil.MemNet{}
		h := startMemSim(t, n, "api:80", sim.Options{HistorySize: 5})
		putPods(t, h.Server, 0, 10)
		path := filepath.Join(t.TempDir(), "pods.snap")
		options := func() Options[*testPod] {
			opts := snapshotOptions(t, "http://api:80", path)
			opts.Client = memClient(t, n, "api:80")
			return opts
		}
		runAndStop(t, options())
		for i := range 8 { // more changes than the history holds
			_, err := h.Server.Delete("pods", "ns", fmt.Sprintf("p-%d", i))
			require.NoError(t, err)
		}

		inf, err := New(options())
		require.NoError(t, err)
		rec := &recorderT{}
		_, err = inf.AddHandler(rec, HandlerOptions{})
		require.NoError(t, err)
		start(t, inf)
		require.True(t, inf.WaitForSync(t.Context()))
		require.Equal(t, serverState(t, h.Server), storeRVs(inf))
		require.True(t, inf.Stats().Restored)
		require.EqualValues(t, 1, inf.Stats().Relists, "the 410 made it list")
		synctest.Wait()
		calls := rec.get()
		require.Len(t, calls, 18, "10 restored adds, then the 8 deletes: %v", calls)
		require.Contains(t, calls[10:], "delete ns/p-0@"+rvOf(t, calls, "ns/p-0")+" unknown")
	})
}

// rvOf finds the RV the initial add of key carried.
func rvOf(t *testing.T, calls []string, key string) string {
	for _, c := range calls {
		if rest, ok := strings.CutPrefix(c, "add "+key+"@"); ok {
			return strings.TrimSuffix(rest, " initial")
		}
	}
	t.Fatalf("no add of %s in %v", key, calls)
	return ""
}

// TestSnapshotBadFilesAreIgnored: a corrupt, truncated, foreign or
// another informer's file is ignored and the informer lists; the next
// write replaces it with a good one.
func TestSnapshotBadFilesAreIgnored(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	putPods(t, h.Server, 0, 5)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.snap")
	runAndStop(t, snapshotOptions(t, h.URL, good))
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	flipped := append([]byte(nil), data...)
	flipped[len(flipped)/2] ^= 0x40

	other := snapshotOptions(t, h.URL, filepath.Join(dir, "other.snap"))
	other.Scope.LabelSelector = "app=other"
	runAndStop(t, other)
	foreign, err := os.ReadFile(filepath.Join(dir, "other.snap"))
	require.NoError(t, err)

	for name, content := range map[string][]byte{
		"truncated":        data[:len(data)-3],
		"bit flipped":      flipped,
		"not a snapshot":   []byte(`{"kind":"PodList"}`),
		"empty":            nil,
		"another informer": foreign,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pods.snap")
			require.NoError(t, os.WriteFile(path, content, 0o600))
			inf := runAndStop(t, snapshotOptions(t, h.URL, path))
			require.False(t, inf.Stats().Restored)
			require.EqualValues(t, 1, inf.Stats().Relists, "it listed")
			require.EqualValues(t, 1, inf.Stats().SnapshotWrites)
			again := runAndStop(t, snapshotOptions(t, h.URL, path))
			require.True(t, again.Stats().Restored, "the file it wrote is good")
		})
	}
}

func TestSnapshotNeedsCompactAndAPath(t *testing.T) {
	opts := simOptions(t, "http://127.0.0.1:1", ListAuto)
	opts.Store = StoreTyped
	opts.Snapshot = &SnapshotOptions{Path: "x"}
	_, err := New(opts)
	require.ErrorContains(t, err, "Snapshot needs the compact store")
	opts.Store = StoreCompact
	opts.Snapshot = &SnapshotOptions{}
	_, err = New(opts)
	require.ErrorContains(t, err, "SnapshotOptions.Path is empty")
}

// TestSnapshotFilesOthersControlAreRefused: a snapshot path another local
// user could have planted (a symbolic link, even to a good snapshot of this
// informer) or changed (a file writable by its group) is logged as refused,
// and the informer lists; its next write replaces the path with its own
// 0600 file, which the next run loads.
func TestSnapshotFilesOthersControlAreRefused(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	putPods(t, h.Server, 0, 5)
	good := filepath.Join(t.TempDir(), "good.snap")
	runAndStop(t, snapshotOptions(t, h.URL, good))
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	for name, plant := range map[string]func(path string){
		"a symbolic link": func(path string) { require.NoError(t, os.Symlink(good, path)) },
		"group-writable": func(path string) {
			require.NoError(t, os.WriteFile(path, data, 0o600))
			require.NoError(t, os.Chmod(path, 0o660))
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pods.snap")
			plant(path)
			logs := &testutil.Buffer{}
			opts := snapshotOptions(t, h.URL, path)
			opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
			inf := runAndStop(t, opts)
			require.False(t, inf.Stats().Restored)
			require.EqualValues(t, 1, inf.Stats().Relists, "it listed")
			require.Contains(t, logs.String(), "refusing to load it")
			st, err := os.Lstat(path)
			require.NoError(t, err)
			require.True(t, st.Mode().IsRegular())
			require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
			again := runAndStop(t, snapshotOptions(t, h.URL, path))
			require.True(t, again.Stats().Restored, "the file it wrote is its own")
		})
	}
}
