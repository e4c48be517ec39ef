package suite

import (
	"io"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

func watchCases() []Case {
	return []Case{
		{Name: "watch/events-from-list-rv", Run: testWatchEvents},
		{Name: "watch/bookmarks", Run: testBookmarks},
		{Name: "watch/timeout-ends-cleanly", Run: testWatchTimeout},
		{Name: "watch/streaming-list", Run: testStreamingList},
		{Name: "watch/from-rv0-replays-state", Run: testWatchFromZero},
	}
}

// testWatchEvents: a watch from a list's RV sees exactly the changes made
// after the list, in order, each with a newer RV: ADDED, MODIFIED, DELETED.
// Pods listed before are not replayed.
func testWatchEvents(t T, e *Env) {
	createPods(t, e, podNames("old", 2), nil)
	page, err := watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{})
	require.NoError(t, err)
	st := openWatch[*Pod](t, e, e.Admin, watch.WatchOptions{ResourceVersion: page.ResourceVersion, AllowBookmarks: true})

	created, err := e.Kube.CreatePod(e.Ctx, e.NS, "w", nil)
	require.NoError(t, err)
	labelled, err := e.Kube.LabelPod(e.Ctx, e.NS, "w", "step", "2")
	require.NoError(t, err)
	require.NoError(t, e.Kube.DeletePod(e.Ctx, e.NS, "w"))

	last := rvNumber(t, page.ResourceVersion)
	ev := nextChange(t, st)
	require.Equal(t, watch.Added, ev.Type)
	require.Equal(t, "w", ev.Object.Name)
	require.Equal(t, created.ResourceVersion, ev.Object.ResourceVersion)
	require.Equal(t, "Pending", ev.Object.Status.Phase)
	last = requireNewer(t, last, ev.Object.ResourceVersion)

	ev = nextChange(t, st)
	require.Equal(t, watch.Modified, ev.Type)
	require.Equal(t, labelled.ResourceVersion, ev.Object.ResourceVersion)
	require.Equal(t, "2", ev.Object.Labels["step"])
	last = requireNewer(t, last, ev.Object.ResourceVersion)

	// A delete may first show as a MODIFIED that sets deletionTimestamp.
	ev = nextChange(t, st)
	if ev.Type == watch.Modified {
		require.NotNil(t, ev.Object.DeletionTimestamp, "MODIFIED after delete without deletionTimestamp")
		last = requireNewer(t, last, ev.Object.ResourceVersion)
		ev = nextChange(t, st)
	}
	require.Equal(t, watch.Deleted, ev.Type)
	require.Equal(t, "w", ev.Object.Name)
	requireNewer(t, last, ev.Object.ResourceVersion)
}

func requireNewer(t T, last uint64, rv string) uint64 {
	t.Helper()
	n := rvNumber(t, rv)
	require.Greater(t, n, last, "event RV %s not newer than %d", rv, last)
	return n
}

// testBookmarks: with allowWatchBookmarks, a watch whose own objects are
// quiet still learns that the resource moved on: a change outside its
// namespace is followed, before timeoutSeconds ends the stream, by a
// BOOKMARK whose object carries only a resourceVersion at least that new.
// (The real server sends one about 2 s before the timeout, and only when
// the resource's newest RV has passed the watcher's.)
func testBookmarks(t T, e *Env) {
	rv := createPods(t, e, podNames("b", 1), nil)
	other := e.NS + "-other"
	require.NoError(t, e.Kube.CreateNamespace(e.Ctx, other))
	st := openWatch[*Pod](t, e, e.Admin, watch.WatchOptions{ResourceVersion: rv, AllowBookmarks: true, TimeoutSeconds: 12})
	elsewhere, err := e.Kube.CreatePod(e.Ctx, other, "elsewhere", nil)
	require.NoError(t, err)

	var newest uint64
	for {
		ev, err := st.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		require.Equal(t, watch.Bookmark, ev.Type, "unexpected event on a quiet watch: %s %s", ev.Type, ev.Object.GetName())
		require.Empty(t, ev.Object.Name, "bookmark object has a name")
		newest = max(newest, rvNumber(t, ev.Object.ResourceVersion))
	}
	require.GreaterOrEqual(t, newest, rvNumber(t, elsewhere.ResourceVersion),
		"newest bookmark RV (0: none) vs the RV of a change in another namespace")
}

// testWatchTimeout: timeoutSeconds makes the server end the stream, and the
// client sees a clean io.EOF, not an error.
func testWatchTimeout(t T, e *Env) {
	page, err := watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{})
	require.NoError(t, err)
	st := openWatch[*Pod](t, e, e.Admin, watch.WatchOptions{ResourceVersion: page.ResourceVersion, TimeoutSeconds: 2})
	for {
		ev, err := st.Next()
		if err == io.EOF {
			return
		}
		require.NoError(t, err, "stream ended with an error, want io.EOF")
		require.Equal(t, watch.Bookmark, ev.Type, "unexpected event on a quiet watch")
	}
}

// testStreamingList: sendInitialEvents streams every existing pod as ADDED,
// then a bookmark annotated k8s.io/initial-events-end, then live changes.
func testStreamingList(t T, e *Env) {
	names := podNames("s", 4)
	rv := createPods(t, e, names, nil)
	st := openWatch[*Pod](t, e, e.Admin, watch.WatchOptions{SendInitialEvents: true, AllowBookmarks: true})
	var initial []string
	var endRV string
	for endRV == "" {
		ev, err := st.Next()
		require.NoError(t, err)
		switch ev.Type {
		case watch.Added:
			initial = append(initial, ev.Object.Name)
		case watch.Bookmark:
			if ev.Object.Annotations[watch.InitialEventsEndAnnotation] == "true" {
				endRV = ev.Object.ResourceVersion
			}
		default:
			require.Failf(t, "unexpected event", "%s during initial events", ev.Type)
		}
	}
	require.ElementsMatch(t, names, initial, "initial ADDED events")
	require.GreaterOrEqual(t, rvNumber(t, endRV), rvNumber(t, rv), "initial-events-end bookmark RV")

	_, err := e.Kube.CreatePod(e.Ctx, e.NS, "s-live", nil)
	require.NoError(t, err)
	ev := nextChange(t, st)
	require.Equal(t, watch.Added, ev.Type)
	require.Equal(t, "s-live", ev.Object.Name)
}

// testWatchFromZero: a watch from resourceVersion "0" starts with an ADDED
// event per existing pod (the state at some recent RV), then live changes.
func testWatchFromZero(t T, e *Env) {
	names := podNames("zero", 3)
	createPods(t, e, names, nil)
	// RV 0 may be served from a cache that lags the create: wait until a
	// list at RV 0 shows every pod, so the watch's start state does too.
	eventually(t, e, 30*time.Second, "RV 0 list to show every pod", func() bool {
		page, err := watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{ResourceVersion: "0"})
		require.NoError(t, err)
		return len(page.Items) == len(names)
	})
	st := openWatch[*Pod](t, e, e.Admin, watch.WatchOptions{ResourceVersion: "0"})
	var got []string
	for range names {
		ev := nextChange(t, st)
		require.Equal(t, watch.Added, ev.Type)
		got = append(got, ev.Object.Name)
	}
	require.ElementsMatch(t, names, got)
	_, err := e.Kube.CreatePod(e.Ctx, e.NS, "zero-live", nil)
	require.NoError(t, err)
	ev := nextChange(t, st)
	require.Equal(t, watch.Added, ev.Type)
	require.Equal(t, "zero-live", ev.Object.Name)
}
