package informer

import (
	"log/slog"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

func fastOptions(host string, t *testing.T, mode ListMode) Options[*testPod] {
	return Options[*testPod]{
		Client:   newClient(t, host),
		Resource: kube.Pods,
		Logger:   quietLogger(),
		Tuning:   Tuning{ListMode: mode, PageSize: 2, Backoff: Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond}},
	}
}

func newInformer(t *testing.T, s *scripted, mode ListMode) (*Informer[*testPod], *recorderT) {
	rec := &recorderT{}
	return newInformerWith(t, s, mode, rec), rec
}

func newInformerWith(t *testing.T, s *scripted, mode ListMode, rec *recorderT) *Informer[*testPod] {
	inf, err := New(fastOptions(s.srv.URL, t, mode))
	require.NoError(t, err)
	_, err = inf.AddHandler(rec, HandlerOptions{})
	require.NoError(t, err)
	return inf
}

func TestPagedListThenWatch(t *testing.T) {
	rec := &recorderT{}
	s := newScripted(t,
		answer(200, listJSON("10", "tok1", podJSON("a", "5"), podJSON("b", "6"))),
		answer(200, listJSON("10", "", podJSON("c", "7"))),
		when(rec.count(3), stream(false, eventJSON("ADDED", podJSON("d", "11")), eventJSON("MODIFIED", podJSON("a", "12")),
			eventJSON("DELETED", podJSON("b", "13")))),
	)
	inf := newInformerWith(t, s, ListPaged, rec)
	start(t, inf)
	q := s.waitRequests(t, 3)
	require.Equal(t, "0", q[0].Get("resourceVersion"), "first list from the cache")
	require.Equal(t, "2", q[0].Get("limit"))
	require.Equal(t, "tok1", q[1].Get("continue"))
	require.Empty(t, q[1].Get("resourceVersion"), "no RV beside a continue token")
	require.Equal(t, "1", q[2].Get("watch"))
	require.Equal(t, "10", q[2].Get("resourceVersion"), "watch from the list RV")
	require.Equal(t, "true", q[2].Get("allowWatchBookmarks"))
	require.Eventually(t, func() bool { return len(rec.get()) == 6 }, waitLong, tick)
	require.True(t, inf.HasSynced())
	require.Equal(t, map[string]string{"ns/a": "12", "ns/c": "7", "ns/d": "11"}, storeRVs(inf))
	calls := rec.get()
	require.ElementsMatch(t, []string{"add ns/a@5 initial", "add ns/b@6 initial", "add ns/c@7 initial"}, calls[:3])
	require.Equal(t, []string{"add ns/d@11", "update ns/a@5->12", "delete ns/b@13"}, calls[3:])
}

func TestWatch410RelistsFromLastRVAndTombstonesMissedDeletes(t *testing.T) {
	rec := &recorderT{}
	s := newScripted(t,
		answer(200, listJSON("10", "", podJSON("a", "5"), podJSON("b", "6"))),
		when(rec.count(2), stream(true, eventJSON("MODIFIED", podJSON("a", "20")), bookmarkJSON("25", false),
			eventJSON("ERROR", statusJSON(410, "Expired")))),
		when(rec.count(3), answer(200, listJSON("40", "", podJSON("a", "30"), podJSON("c", "35")))),
		stream(false),
	)
	inf := newInformerWith(t, s, ListPaged, rec)
	start(t, inf)
	q := s.waitRequests(t, 4)
	require.Equal(t, "25", q[2].Get("resourceVersion"), "relist from the bookmark's RV, not from empty")
	require.Equal(t, watch.MatchNotOlderThan, q[2].Get("resourceVersionMatch"))
	require.Equal(t, "40", q[3].Get("resourceVersion"))
	require.Eventually(t, func() bool { return len(rec.get()) == 6 }, waitLong, tick)
	require.Equal(t, map[string]string{"ns/a": "30", "ns/c": "35"}, storeRVs(inf))
	calls := rec.get()
	require.ElementsMatch(t, []string{"add ns/a@5 initial", "add ns/b@6 initial"}, calls[:2])
	require.Equal(t, "update ns/a@5->20", calls[2])
	// A relist's notifications come in no particular order.
	require.ElementsMatch(t, []string{"update ns/a@20->30", "add ns/c@35", "delete ns/b@6 unknown"}, calls[3:])
	require.EqualValues(t, 1, inf.Stats().Gone)
}

func TestList410FallsBackToEmptyRV(t *testing.T) {
	s := newScripted(t,
		answer(410, statusJSON(410, "Expired")),
		answer(200, listJSON("10", "", podJSON("a", "5"))),
		stream(false),
	)
	inf, _ := newInformer(t, s, ListPaged)
	start(t, inf)
	q := s.waitRequests(t, 3)
	require.Equal(t, "0", q[0].Get("resourceVersion"))
	require.Empty(t, q[1].Get("resourceVersion"), "after a list 410 the list is consistent")
	require.Equal(t, "10", q[2].Get("resourceVersion"))
}

func TestExpiredContinueTakesOneFullList(t *testing.T) {
	s := newScripted(t,
		answer(200, listJSON("10", "tok1", podJSON("a", "5"), podJSON("b", "6"))),
		answer(410, statusJSON(410, "Expired")),
		answer(200, listJSON("12", "", podJSON("a", "5"), podJSON("c", "11"))),
		stream(false),
	)
	inf, _ := newInformer(t, s, ListPaged)
	start(t, inf)
	q := s.waitRequests(t, 4)
	require.Empty(t, q[2].Get("limit"), "full list is not paginated")
	require.Empty(t, q[2].Get("continue"))
	require.Empty(t, q[2].Get("resourceVersion"))
	require.Equal(t, "12", q[3].Get("resourceVersion"))
	require.Eventually(t, func() bool { return len(storeRVs(inf)) == 2 }, waitLong, tick)
	require.Equal(t, map[string]string{"ns/a": "5", "ns/c": "11"}, storeRVs(inf), "the half-built first list never reached the store")
}

func TestRetryableWatchErrorKeepsRV(t *testing.T) {
	s := newScripted(t,
		answer(200, listJSON("10", "")),
		answer(http.StatusTooManyRequests, statusJSON(429, "TooManyRequests")),
		confirmed("10"),
		answer(http.StatusServiceUnavailable, statusJSON(503, "ServiceUnavailable")),
		confirmed("10"),
		stream(false, eventJSON("ADDED", podJSON("a", "11"))),
	)
	inf, _ := newInformer(t, s, ListPaged)
	start(t, inf)
	q := s.waitRequests(t, 6)
	for _, i := range []int{1, 3, 5} {
		require.Equal(t, "10", q[i].Get("resourceVersion"), "request %d", i)
		require.Equal(t, "1", q[i].Get("watch"), "request %d is a watch", i)
	}
	for _, i := range []int{2, 4} {
		requireConfirm(t, q[i], "10")
	}
	require.Eventually(t, func() bool { return len(storeRVs(inf)) == 1 }, waitLong, tick)
}

func TestStreamingList(t *testing.T) {
	rec := &recorderT{}
	s := newScripted(t,
		stream(false, eventJSON("ADDED", podJSON("a", "5")), eventJSON("ADDED", podJSON("b", "6")),
			bookmarkJSON("10", true)),
	)
	inf := newInformerWith(t, s, ListAuto, rec)
	start(t, inf)
	q := s.waitRequests(t, 1)
	require.Equal(t, "true", q[0].Get("sendInitialEvents"))
	require.Equal(t, watch.MatchNotOlderThan, q[0].Get("resourceVersionMatch"))
	require.Eventually(t, func() bool { return len(rec.get()) == 2 }, waitLong, tick)
	require.ElementsMatch(t, []string{"add ns/a@5 initial", "add ns/b@6 initial"}, rec.get())
	require.True(t, inf.HasSynced())
}

func TestStreamingListUnsupportedFallsBackToList(t *testing.T) {
	s := newScripted(t,
		// An old server ignores sendInitialEvents: plain watch semantics,
		// a bookmark without the end annotation.
		stream(true, eventJSON("ADDED", podJSON("a", "5")), bookmarkJSON("8", false)),
		answer(200, listJSON("10", "", podJSON("a", "5"))),
		stream(false),
	)
	inf, _ := newInformer(t, s, ListAuto)
	start(t, inf)
	q := s.waitRequests(t, 3)
	require.Empty(t, q[1].Get("watch"), "second request is a list")
	require.Equal(t, "0", q[1].Get("resourceVersion"))
	require.Equal(t, "10", q[2].Get("resourceVersion"))
	require.Eventually(t, inf.HasSynced, waitLong, tick)
}

func TestStreamingList422FallsBackToList(t *testing.T) {
	s := newScripted(t,
		answer(422, statusJSON(422, "Invalid")),
		answer(200, listJSON("10", "", podJSON("a", "5"))),
		stream(false),
	)
	inf, _ := newInformer(t, s, ListAuto)
	start(t, inf)
	q := s.waitRequests(t, 3)
	require.Equal(t, "2", q[1].Get("limit"))
	require.Eventually(t, inf.HasSynced, waitLong, tick)
}

func TestBookmarksAdvanceResumeRV(t *testing.T) {
	s := newScripted(t,
		answer(200, listJSON("10", "")),
		stream(true, bookmarkJSON("50", false)),
		confirmed("50"),
		stream(false),
	)
	inf, _ := newInformer(t, s, ListPaged)
	start(t, inf)
	q := s.waitRequests(t, 4)
	requireConfirm(t, q[2], "50")
	require.Equal(t, "50", q[3].Get("resourceVersion"))
	require.Equal(t, "50", inf.Store().ResourceVersion())
}

func TestMalformedFrameKeepsStoreAndResumes(t *testing.T) {
	s := newScripted(t,
		answer(200, listJSON("10", "", podJSON("a", "5"))),
		stream(true, eventJSON("ADDED", podJSON("b", "11")), `{"type":"MODIFIED","object":{"metadata":{"name":[1,2`),
		confirmed("11"),
		stream(false, eventJSON("ADDED", podJSON("c", "12"))),
	)
	inf, _ := newInformer(t, s, ListPaged)
	start(t, inf)
	q := s.waitRequests(t, 4)
	require.Equal(t, "11", q[3].Get("resourceVersion"))
	require.Eventually(t, func() bool { return len(storeRVs(inf)) == 3 }, waitLong, tick)
}

func TestLateHandlerGetsStoreThenLive(t *testing.T) {
	s := newScripted(t,
		answer(200, listJSON("10", "", podJSON("a", "5"), podJSON("b", "6"))),
		stream(false),
	)
	inf, _ := newInformer(t, s, ListPaged)
	start(t, inf)
	require.Eventually(t, inf.HasSynced, waitLong, tick)
	late := &recorderT{}
	reg, err := inf.AddHandler(late, HandlerOptions{})
	require.NoError(t, err)
	require.Eventually(t, reg.HasSynced, waitLong, tick)
	require.ElementsMatch(t, []string{"add ns/a@5 initial", "add ns/b@6 initial"}, late.get())
	reg.Remove()
}

func TestHostileListsAreBoundedAndRecovered(t *testing.T) {
	// In a bubble: the last watch is silent, and on real time a loaded
	// machine could reach the asserts after its idle deadline ended it.
	synctest.Test(t, func(t *testing.T) {
		neverEnds := func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			w.Write([]byte(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[` + podJSON("a", "5")))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
		n := &testutil.MemNet{}
		s := newMemScripted(t, n, "api:80",
			neverEnds, // caught by the idle deadline
			answer(200, listJSON("10", "loop", podJSON("a", "5"))),
			answer(200, listJSON("10", "loop", podJSON("b", "6"))), // the same token again: refused
			answer(200, listJSON("11", "", podJSON("a", "5"), podJSON("c", "7"))),
			stream(false),
		)
		opts := memOptions(t, n, "api:80")
		opts.IdleTimeout = 300 * time.Millisecond
		logs := &testutil.Buffer{}
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		inf, err := New(opts)
		require.NoError(t, err)
		start(t, inf)
		time.Sleep(400 * time.Millisecond) // past the first idle deadline, before the watch's
		synctest.Wait()
		q := s.requests()
		require.Len(t, q, 5, "the hung list, the looping pages, the list that commits, the watch")
		require.Equal(t, "11", q[4].Get("resourceVersion"))
		require.True(t, inf.HasSynced())
		require.Equal(t, map[string]string{"ns/a": "5", "ns/c": "7"}, storeRVs(inf), "nothing from the broken lists reached the store")
		require.Contains(t, logs.String(), "idle for longer than its deadline")
		require.Contains(t, logs.String(), "refusing to loop")
		require.NoError(t, inf.Health().LastError, "cleared once a list committed")
		require.False(t, inf.Health().LastErrorTime.IsZero())
	})
}
