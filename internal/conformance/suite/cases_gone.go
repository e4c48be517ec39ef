package suite

import (
	"net/http"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

func goneCases() []Case {
	return []Case{
		{Name: "gone/list-exact-after-compaction", Run: testGoneListExact},
		{Name: "gone/continue-after-compaction", Run: testGoneContinue},
		{Name: "gone/watch-error-event", Run: testGoneWatch},
	}
}

// requireExpired checks err is a 410 with reason Expired.
func requireExpired(t T, err error, what string) *kube.StatusError {
	t.Helper()
	require.True(t, kube.IsGone(err), "%s: want 410, got %v", what, err)
	se, _ := kube.AsStatus(err)
	require.EqualValues(t, http.StatusGone, se.Code, what)
	require.Equal(t, "Expired", se.Reason, "%s: reason", what)
	return se
}

// testGoneListExact: an exact list at an RV that compaction passed is 410.
func testGoneListExact(t T, e *Env) {
	rv := createPods(t, e, podNames("x", 2), nil)
	page, err := watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{ResourceVersion: rv, ResourceVersionMatch: watch.MatchExact})
	require.NoError(t, err, "exact list before compaction")
	require.Equal(t, podNames("x", 2), namesOf(page.Items))

	require.NoError(t, e.Target.Expire(e.Ctx, rv))
	_, err = watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{ResourceVersion: rv, ResourceVersionMatch: watch.MatchExact})
	requireExpired(t, err, "exact list after compaction")
}

// testGoneContinue: a continue token whose list RV was compacted is 410
// Expired, and the answer carries a fresh token that lists the rest (an
// inconsistent but complete continuation).
func testGoneContinue(t T, e *Env) {
	names := podNames("k", 5)
	createPods(t, e, names, nil)
	page, err := watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{Limit: 2})
	require.NoError(t, err)
	require.NotEmpty(t, page.Continue)

	require.NoError(t, e.Target.Expire(e.Ctx, page.ResourceVersion))
	_, err = watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{Limit: 2, Continue: page.Continue})
	se := requireExpired(t, err, "continue after compaction")
	require.NotEmpty(t, se.Continue, "410 on a continue token should offer a fresh token")

	rest, _ := listAll[*Pod](t, e, e.Admin, watch.ListOptions{Limit: 2, Continue: se.Continue})
	require.Equal(t, names, namesOf(append(page.Items, rest...)), "first page plus the rest from the fresh token")
}

// testGoneWatch: a watch from a compacted RV on a server that reads storage
// opens with 200 and then ends with an ERROR event: 410 Expired.
func testGoneWatch(t T, e *Env) {
	rv := createPods(t, e, podNames("g", 1), nil)
	require.NoError(t, e.Target.Expire(e.Ctx, rv))
	c := newClient(t, e.Target.StorageConfig())
	st, err := watch.Watch[*Pod](e.Ctx, c, kube.Pods, kube.Scope{Namespace: e.NS}, watch.WatchOptions{ResourceVersion: rv})
	require.NoError(t, err, "the watch should open (200) and fail inside the stream")
	defer st.Close()
	ev, err := st.Next()
	requireExpired(t, err, "first event of a watch from a compacted RV, got "+string(ev.Type))
}
