package sim_test

import (
	"net/url"
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

func TestListShapeMatchesCapture(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 6)
	real := decodeMap(t, capture(t, "list-pods-page1.json"))
	got := getMap(t, h, "/api/v1/namespaces/demo/pods?limit=2")
	for _, k := range []string{"kind", "apiVersion"} {
		require.Equal(t, real[k], got[k], "field %s", k)
	}
	gm, rm := listMeta(got), listMeta(real)
	for k := range rm {
		require.Contains(t, gm, k, "list metadata lacks %s (real has %v)", k, keysOf(rm))
	}
	require.EqualValues(t, 4, gm["remainingItemCount"], "remainingItemCount")
	pod := items(t, got)[0]
	realPod := items(t, real)[0]
	for k := range realPod {
		require.Contains(t, pod, k, "pod lacks top-level %s", k)
	}
	for k := range realPod["metadata"].(map[string]any) {
		if k == "annotations" || k == "generation" {
			continue
		}
		require.Contains(t, pod["metadata"], k, "pod metadata lacks %s", k)
	}
}

func TestListPaginationIsConsistentSnapshot(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 7)
	page1 := getMap(t, h, "/api/v1/namespaces/demo/pods?limit=3")
	md := listMeta(page1)
	listRV := md["resourceVersion"].(string)
	cont, _ := md["continue"].(string)
	require.NotEmpty(t, cont)
	require.EqualValues(t, 4, md["remainingItemCount"])

	// Changes after the first page must not show in later pages.
	_, err := h.Server.Delete("pods", "demo", "worker-5")
	require.NoError(t, err)
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "worker-9"})
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "worker-6", Phase: "Failed"})

	var names []string
	for _, it := range items(t, page1) {
		names = append(names, nameOf(it))
	}
	for cont != "" {
		page := getMap(t, h, "/api/v1/namespaces/demo/pods?limit=3&continue="+url.QueryEscape(cont))
		md := listMeta(page)
		require.Equal(t, listRV, md["resourceVersion"], "later pages report the snapshot RV")
		for _, it := range items(t, page) {
			names = append(names, nameOf(it))
			if nameOf(it) == "worker-6" {
				st := it["status"].(map[string]any)
				require.Equal(t, "Pending", st["phase"], "worker-6 as of the snapshot")
			}
		}
		cont, _ = md["continue"].(string)
	}
	want := []string{"worker-1", "worker-2", "worker-3", "worker-4", "worker-5", "worker-6", "worker-7"}
	require.Equal(t, want, names)
}

func TestListRV0IgnoresLimit(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 6)
	got := getMap(t, h, "/api/v1/namespaces/demo/pods?resourceVersion=0&limit=2")
	require.Len(t, items(t, got), 6, "RV=0 is served from the cache: limit ignored")
	require.NotContains(t, listMeta(got), "continue")
	got = getMap(t, h, "/api/v1/namespaces/demo/pods?limit=2")
	require.Len(t, items(t, got), 2, "RV unset honours limit")
}

func TestListAllNamespacesSortedByKey(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "b", 2)
	seedPods(t, h, "a", 2)
	got := getMap(t, h, "/api/v1/pods")
	var keys []string
	for _, it := range items(t, got) {
		keys = append(keys, it["metadata"].(map[string]any)["namespace"].(string)+"/"+nameOf(it))
	}
	require.True(t, sort.StringsAreSorted(keys), "got %v", keys)
	require.Len(t, keys, 4)
}

func TestListExactRV(t *testing.T) {
	h := simkit.Start(t, sim.Options{HistorySize: 100})
	seedPods(t, h, "demo", 3)
	rv := h.Server.ResourceVersion()
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "late"})
	got := getMap(t, h, "/api/v1/namespaces/demo/pods?resourceVersionMatch=Exact&resourceVersion="+strconv.FormatUint(rv, 10))
	require.Len(t, items(t, got), 3, "exact list is as of rv %d", rv)
	require.Equal(t, strconv.FormatUint(rv, 10), listMeta(got)["resourceVersion"])

	h.Server.Compact()
	code, body := do(t, h, "GET", "/api/v1/namespaces/demo/pods?resourceVersionMatch=Exact&resourceVersion="+strconv.FormatUint(rv, 10), "", nil)
	require.Equal(t, 410, code)
	require.JSONEq(t, string(capture(t, "status-410-list-exact-compacted.json")), string(body))
}

func TestListErrors(t *testing.T) {
	h := simkit.Start(t, sim.Options{TooLargeWait: -1})
	seedPods(t, h, "demo", 2)
	tests := []struct {
		name, path string
		code       int
		capture    string
	}{
		{"bad field", "/api/v1/pods?fieldSelector=spec.bogus%3D1", 400, "status-400-fieldselector.json"},
		{"missing pod", "/api/v1/namespaces/demo/pods/nope", 404, "status-404.json"},
		{"rvm without rv", "/api/v1/pods?resourceVersionMatch=Exact", 422, ""},
		{"bad continue", "/api/v1/pods?continue=xyz!", 400, ""},
		{"bad limit", "/api/v1/pods?limit=-3", 400, ""},
		{"unknown resource", "/api/v1/bogus", 404, ""},
		{"rv too large", "/api/v1/pods?resourceVersion=999999", 504, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(t, h, "GET", tc.path, "", nil)
			require.Equal(t, tc.code, code, "body %s", body)
			st := decodeMap(t, body)
			require.Equal(t, "Status", st["kind"])
			require.EqualValues(t, tc.code, st["code"])
			if tc.capture != "" {
				require.JSONEq(t, string(capture(t, tc.capture)), string(body))
			}
		})
	}
}

func TestListContinueExpired(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 5)
	page := getMap(t, h, "/api/v1/namespaces/demo/pods?limit=2")
	cont := listMeta(page)["continue"].(string)
	h.Server.ExpireContinueTokens()
	code, body := do(t, h, "GET", "/api/v1/namespaces/demo/pods?limit=2&continue="+url.QueryEscape(cont), "", nil)
	require.Equal(t, 410, code, "%s", body)
	st := decodeMap(t, body)
	real := decodeMap(t, capture(t, "status-410-expired-continue.json"))
	require.Equal(t, real["message"], st["message"])
	require.Equal(t, real["reason"], st["reason"])
	fresh, _ := listMeta(st)["continue"].(string)
	require.NotEmpty(t, fresh, "a 410 offers a fresh continue token")
	rest := getMap(t, h, "/api/v1/namespaces/demo/pods?limit=10&continue="+url.QueryEscape(fresh))
	var names []string
	for _, it := range items(t, rest) {
		names = append(names, nameOf(it))
	}
	require.Equal(t, []string{"worker-3", "worker-4", "worker-5"}, names, "the fresh token continues after the last item")
}

func TestListSelectorsMatchCapture(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 5)
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "web-7d4b9c", Labels: map[string]string{"app": "web"}})
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "worker-run", NodeName: "n1", Labels: map[string]string{"app": "worker"}})
	real := decodeMap(t, capture(t, "list-pods-selectors.json"))
	got := getMap(t, h, "/api/v1/namespaces/demo/pods?labelSelector=app%3Dworker&fieldSelector=status.phase%3DPending")
	require.Len(t, items(t, got), len(items(t, real)))
	require.ElementsMatch(t, keysOf(listMeta(real)), keysOf(listMeta(got)))
	// With a limit and a selector, pages continue but carry no remainingItemCount.
	page := getMap(t, h, "/api/v1/namespaces/demo/pods?labelSelector=app%3Dworker&limit=2")
	require.NotEmpty(t, listMeta(page)["continue"])
	require.NotContains(t, listMeta(page), "remainingItemCount")
	code, body := do(t, h, "GET", "/api/v1/pods?labelSelector=app%3D%3D%3D", "", nil)
	require.Equal(t, 400, code)
	require.JSONEq(t, string(capture(t, "status-400-labelselector.json")), string(body))
	code, body = do(t, h, "GET", "/api/v1/pods?watch=1&labelSelector=a+b", "", nil)
	require.Equal(t, 400, code, "watches validate selectors too")
	require.Equal(t, "BadRequest", decodeMap(t, body)["reason"])
}
