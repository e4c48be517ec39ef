package informer

import (
	"errors"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/store"
)

// TestRefusedEventsLeaveNoGhost: when Transform refuses a MODIFIED or a
// DELETED, the store must not keep the older version while it reports the
// newer RV. The refused objects are absent, as a relist would leave them,
// handlers hear of it, and Health shows why.
func TestRefusedEventsLeaveNoGhost(t *testing.T) {
	rec := &recorderT{}
	s := newScripted(t,
		answer(200, listJSON("10", "", podJSON("a", "5"), podJSON("b", "6"), podJSON("c", "7"))),
		when(rec.count(3), stream(false,
			eventJSON("MODIFIED", podJSON("a", "11")), // refused: the store must not keep a@5
			eventJSON("DELETED", podJSON("b", "12")),  // refused too, yet b is gone on the server
			eventJSON("MODIFIED", podJSON("c", "13")), // accepted
		)),
	)
	opts := fastOptions(s.srv.URL, t, ListPaged)
	opts.Transform = func(p *testPod) (*testPod, error) {
		if p.ResourceVersion == "11" || p.ResourceVersion == "12" {
			return nil, errors.New("no")
		}
		return p, nil
	}
	inf, err := New(opts)
	require.NoError(t, err)
	_, err = inf.AddHandler(rec, HandlerOptions{})
	require.NoError(t, err)
	start(t, inf)
	require.Eventually(t, func() bool { return inf.Store().ResourceVersion() == "13" }, waitLong, tick)
	require.Equal(t, map[string]string{"ns/c": "13"}, storeRVs(inf), "no ghost of a@5 or b@6")
	require.Eventually(t, func() bool { return len(rec.get()) == 6 }, waitLong, tick)
	// a still exists on the server: its removal is inferred, as a relist
	// dropping it would report it; b's delete was seen.
	require.Equal(t, []string{"delete ns/a@5 unknown", "delete ns/b@6", "update ns/c@7->13"}, rec.get()[3:])
	require.EqualValues(t, 2, inf.Stats().TransformErrors)
	h := inf.Health()
	require.ErrorContains(t, h.LastRefusal, "transform: no")
	require.False(t, h.LastRefusalTime.IsZero())
}

// TestIndexFailureOnUpdateLeavesNoGhost: an index function that fails on
// the new version of an object must not leave the old version indexed.
func TestIndexFailureOnUpdateLeavesNoGhost(t *testing.T) {
	s := newScripted(t,
		answer(200, listJSON("10", "", podJSON("a", "5"))),
		stream(false, eventJSON("MODIFIED", podJSON("a", "11"))),
	)
	opts := fastOptions(s.srv.URL, t, ListPaged)
	opts.Indexers = map[string]store.IndexFunc[*testPod]{
		"bad": func(p *testPod) ([]string, error) {
			if p.ResourceVersion == "11" {
				return nil, errors.New("cannot index")
			}
			return []string{"x"}, nil
		},
	}
	inf, err := New(opts)
	require.NoError(t, err)
	start(t, inf)
	require.Eventually(t, func() bool { return inf.Store().ResourceVersion() == "11" }, waitLong, tick)
	require.Empty(t, storeRVs(inf))
	got, err := inf.Store().ByIndex("bad", "x")
	require.NoError(t, err)
	require.Empty(t, got)
	require.EqualValues(t, 1, inf.Stats().StoreErrors)
}

// TestKeyHandlerUsesTheStoreKey: with a custom Options.Key, the keys
// KeyHandler enqueues must find the objects in the store.
func TestKeyHandlerUsesTheStoreKey(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	got := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), keys...) }
	// The watch starts once the handler has the listed pod's key: a delete
	// of a pod the handler has not yet been told of coalesces with its add
	// into nothing, as it should.
	s := newScripted(t,
		answer(200, listJSON("10", "", podJSON("a", "5"))),
		when(func() bool { return len(got()) >= 1 },
			stream(false, eventJSON("ADDED", podJSON("b", "11")), eventJSON("DELETED", podJSON("a", "12")))),
	)
	opts := fastOptions(s.srv.URL, t, ListPaged)
	opts.Key = func(p *testPod) (string, error) { return "pod:" + p.Name + "@" + p.Namespace, nil }
	inf, err := New(opts)
	require.NoError(t, err)
	_, err = inf.AddHandler(KeyHandler[*testPod](func(k string) { mu.Lock(); keys = append(keys, k); mu.Unlock() }), HandlerOptions{})
	require.NoError(t, err)
	start(t, inf)
	require.Eventually(t, func() bool { return len(got()) == 3 }, waitLong, tick)
	require.Equal(t, []string{"pod:a@ns", "pod:b@ns", "pod:a@ns"}, got())
	_, ok := inf.Store().Get("pod:b@ns")
	require.True(t, ok, "the enqueued key is the store's")
}

// TestServerBehindUsRelistsLatest: a server restored to an older state
// (its RV now behind ours) answers the confirmation with 504
// ResourceVersionTooLarge; the informer relists from "" and delivers the
// objects that no longer exist as deletes.
func TestServerBehindUsRelistsLatest(t *testing.T) {
	rec := &recorderT{}
	tooLarge := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: 101, current: 20","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}`
	s := newScripted(t,
		answer(200, listJSON("100", "", podJSON("a", "50"), podJSON("b", "60"), podJSON("c", "70"))),
		when(rec.count(3), stream(true, eventJSON("MODIFIED", podJSON("a", "101")))), // then the server goes away
		when(rec.count(4), answer(http.StatusGatewayTimeout, tooLarge)),
		answer(200, listJSON("20", "", podJSON("a", "15"), podJSON("c", "70"), podJSON("d", "18"))),
		stream(false),
	)
	inf := newInformerWith(t, s, ListPaged, rec)
	start(t, inf)
	q := s.waitRequests(t, 5)
	requireConfirm(t, q[2], "101")
	require.Empty(t, q[3].Get("watch"), "a list")
	require.Empty(t, q[3].Get("resourceVersion"), "of the latest state, not from our RV")
	require.Equal(t, "20", q[4].Get("resourceVersion"), "then watch from the server's own RV")
	require.Eventually(t, func() bool { return len(rec.get()) == 8 }, waitLong, tick)
	require.Equal(t, map[string]string{"ns/a": "15", "ns/c": "70", "ns/d": "18"}, storeRVs(inf))
	require.Equal(t, "20", inf.Store().ResourceVersion())
	// c came back with our RV and UID: a restored server reuses RVs, so it
	// is reported as updated all the same.
	require.ElementsMatch(t, []string{"update ns/a@101->15", "update ns/c@70->70", "add ns/d@18", "delete ns/b@60 unknown"}, rec.get()[4:])
	require.EqualValues(t, 1, inf.Stats().Confirms)
}

// TestChangedComparesUIDs: an object with our RV but another UID is another
// object (deleted and re-created), and a relist reports it as updated.
func TestChangedComparesUIDs(t *testing.T) {
	prev, cur := &testPod{}, &testPod{}
	prev.ResourceVersion, cur.ResourceVersion = "5", "5"
	prev.UID, cur.UID = "u1", "u2"
	require.True(t, changed(prev, cur))
	cur.UID = "u1"
	require.False(t, changed(prev, cur))
}
