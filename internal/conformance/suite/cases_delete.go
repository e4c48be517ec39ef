package suite

import (
	"net/http"
	"net/url"
	"time"

	"github.com/stretchr/testify/require"
)

// The deletion cases: what a delete does to an object that finalizers or a
// grace period keep, as controllers depend on it. They check the API server's
// part only (no kube-controller-manager runs beside the real server, so
// nothing removes the garbage collector's finalizers here; package kwatchtest's
// GarbageCollect option stands in for it, tested against the simulator alone).
func deleteCases() []Case {
	return []Case{
		{Name: "delete/finalizers-hold-until-cleared", Run: testDeleteFinalizers},
		{Name: "delete/pod-on-node-is-graceful", Run: testDeletePodGraceful},
		{Name: "delete/propagation-adds-gc-finalizers", Run: testDeletePropagation},
		{Name: "write/generation-on-spec-changes-only", Run: testGeneration},
	}
}

func withFinalizers(o map[string]any, f ...string) map[string]any {
	o["metadata"].(map[string]any)["finalizers"] = f
	return o
}

// deletionMeta returns deletionTimestamp and deletionGracePeriodSeconds.
func deletionMeta(t T, o map[string]any) (string, any) {
	t.Helper()
	md := metaOf(t, o)
	ts, _ := md["deletionTimestamp"].(string)
	return ts, md["deletionGracePeriodSeconds"]
}

// testDeleteFinalizers: a delete of a configmap with a finalizer answers the
// object (200) with deletionTimestamp and deletionGracePeriodSeconds 0, and it
// stays; another delete changes nothing; a new finalizer is 422; clearing the
// finalizers by a merge patch removes it (one DELETED event after the
// MODIFIED of the delete). A deployment's generation is bumped by the delete.
func testDeleteFinalizers(t T, e *Env) {
	created := mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON,
		jsonBody(t, withFinalizers(configMap("held", map[string]string{"a": "1"}), "example.com/hold"))).obj(t)
	w := openRawWatch(t, e, cmPath(e, ""), metaOf(t, created)["resourceVersion"].(string))

	a := mustCall(t, e, http.MethodDelete, cmPath(e, "held"), nil, "", nil)
	require.Equal(t, http.StatusOK, a.code)
	del := a.obj(t)
	require.Equal(t, "ConfigMap", del["kind"], "the delete answers the object: %s", a.body)
	ts, grace := deletionMeta(t, del)
	require.NotEmpty(t, ts, "deletionTimestamp")
	require.EqualValues(t, 0, grace, "deletionGracePeriodSeconds")
	ev := w.next(t)
	require.Equal(t, "MODIFIED", ev.Type)
	evTS, _ := deletionMeta(t, ev.Object)
	require.Equal(t, ts, evTS)

	got := mustCall(t, e, http.MethodGet, cmPath(e, "held"), nil, "", nil).obj(t)
	rv := metaOf(t, got)["resourceVersion"]
	again := mustCall(t, e, http.MethodDelete, cmPath(e, "held"), nil, "", nil).obj(t)
	require.Equal(t, rv, metaOf(t, again)["resourceVersion"], "a second delete changes nothing")

	add := call(t, e, http.MethodPatch, cmPath(e, "held"), nil, ctMerge,
		[]byte(`{"metadata":{"finalizers":["example.com/hold","example.com/late"]}}`))
	require.Equal(t, http.StatusUnprocessableEntity, add.code, "%s", add.body)
	st := add.status(t)
	require.Equal(t, "Invalid", st.Reason)
	require.Contains(t, string(add.body), `no new finalizers can be added if the object is being deleted, found new finalizers []string{\"example.com/late\"}`)
	require.Contains(t, string(add.body), `"field":"metadata.finalizers"`)

	// A write that keeps the finalizer keeps deletionTimestamp, whatever it sends.
	upd := mustCall(t, e, http.MethodPatch, cmPath(e, "held"), nil, ctMerge,
		[]byte(`{"metadata":{"deletionTimestamp":null},"data":{"a":"2"}}`)).obj(t)
	updTS, _ := deletionMeta(t, upd)
	require.Equal(t, ts, updTS, "a write keeps deletionTimestamp")
	require.Equal(t, "MODIFIED", w.next(t).Type)

	cleared := mustCall(t, e, http.MethodPatch, cmPath(e, "held"), nil, ctMerge, []byte(`{"metadata":{"finalizers":null}}`))
	require.Equal(t, http.StatusOK, cleared.code)
	require.Equal(t, "held", metaOf(t, cleared.obj(t))["name"])
	ev = w.next(t)
	require.Equal(t, "DELETED", ev.Type)
	require.Equal(t, "held", nameOfEvent(ev))
	gone := call(t, e, http.MethodGet, cmPath(e, "held"), nil, "", nil)
	require.Equal(t, http.StatusNotFound, gone.code)

	dep := withFinalizers(deployment("held", 1, "app"), "example.com/hold")
	d := mustCall(t, e, http.MethodPost, deployPath(e, ""), nil, ctJSON, jsonBody(t, dep)).obj(t)
	require.EqualValues(t, 1, metaOf(t, d)["generation"])
	d = mustCall(t, e, http.MethodDelete, deployPath(e, "held"), nil, "", nil).obj(t)
	require.Equal(t, "Deployment", d["kind"])
	require.EqualValues(t, 2, metaOf(t, d)["generation"], "the delete bumps generation")
	mustCall(t, e, http.MethodPatch, deployPath(e, "held"), nil, ctMerge, []byte(`{"metadata":{"finalizers":[]}}`))
	require.Equal(t, http.StatusNotFound, call(t, e, http.MethodGet, deployPath(e, "held"), nil, "", nil).code)
}

func podsPath(e *Env, name string) string {
	p := "/api/v1/namespaces/" + e.NS + "/pods"
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

// testDeletePodGraceful: a pod bound to a node is deleted gracefully: the
// delete sets deletionTimestamp 30 s ahead (spec.terminationGracePeriodSeconds'
// default) and deletionGracePeriodSeconds 30; a longer period changes nothing,
// a shorter one moves both; grace period 0, as the kubelet sends, removes it.
// An unbound pod goes at once.
func testDeletePodGraceful(t T, e *Env) {
	p := newPod(e.NS, "bound", nil)
	p.Spec.NodeName = "node-a"
	mustCall(t, e, http.MethodPost, podsPath(e, ""), nil, ctJSON, jsonBody(t, p))
	before := time.Now()
	del := mustCall(t, e, http.MethodDelete, podsPath(e, "bound"), nil, "", nil).obj(t)
	ts, grace := deletionMeta(t, del)
	require.EqualValues(t, 30, grace, "deletionGracePeriodSeconds")
	at, err := time.Parse(time.RFC3339, ts)
	require.NoError(t, err)
	require.True(t, at.After(before.Add(20*time.Second)), "deletionTimestamp %s is about 30 s after the delete", ts)
	require.Equal(t, http.StatusOK, call(t, e, http.MethodGet, podsPath(e, "bound"), nil, "", nil).code, "the pod stays")

	rv := metaOf(t, del)["resourceVersion"]
	longer := mustCall(t, e, http.MethodDelete, podsPath(e, "bound"), url.Values{"gracePeriodSeconds": {"60"}}, "", nil).obj(t)
	require.Equal(t, rv, metaOf(t, longer)["resourceVersion"], "a longer grace period changes nothing")

	shorter := mustCall(t, e, http.MethodDelete, podsPath(e, "bound"), url.Values{"gracePeriodSeconds": {"10"}}, "", nil).obj(t)
	ts10, grace10 := deletionMeta(t, shorter)
	require.EqualValues(t, 10, grace10)
	at10, err := time.Parse(time.RFC3339, ts10)
	require.NoError(t, err)
	require.Equal(t, at.Add(-20*time.Second), at10, "a shorter period moves deletionTimestamp by the difference")

	mustCall(t, e, http.MethodDelete, podsPath(e, "bound"), url.Values{"gracePeriodSeconds": {"0"}}, "", nil)
	require.Equal(t, http.StatusNotFound, call(t, e, http.MethodGet, podsPath(e, "bound"), nil, "", nil).code)

	mustCall(t, e, http.MethodPost, podsPath(e, ""), nil, ctJSON, jsonBody(t, newPod(e.NS, "unbound", nil)))
	mustCall(t, e, http.MethodDelete, podsPath(e, "unbound"), nil, "", nil)
	require.Equal(t, http.StatusNotFound, call(t, e, http.MethodGet, podsPath(e, "unbound"), nil, "", nil).code)

	p = newPod(e.NS, "asked", nil)
	p.Spec.NodeName = "node-a"
	mustCall(t, e, http.MethodPost, podsPath(e, ""), nil, ctJSON, jsonBody(t, p))
	del = mustCall(t, e, http.MethodDelete, podsPath(e, "asked"), url.Values{"gracePeriodSeconds": {"5"}}, "", nil).obj(t)
	_, grace = deletionMeta(t, del)
	require.EqualValues(t, 5, grace)
	mustCall(t, e, http.MethodDelete, podsPath(e, "asked"), url.Values{"gracePeriodSeconds": {"0"}}, "", nil)
}

// testDeletePropagation: Foreground adds the finalizer foregroundDeletion,
// Orphan the finalizer orphan, and the object stays (no garbage collector runs
// beside the real server to finish); Background deletes at once.
func testDeletePropagation(t T, e *Env) {
	for policy, want := range map[string]string{"Foreground": "foregroundDeletion", "Orphan": "orphan"} {
		name := "by-" + map[string]string{"Foreground": "fg", "Orphan": "orphan"}[policy]
		mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, configMap(name, nil)))
		body := jsonBody(t, map[string]any{"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": policy})
		del := mustCall(t, e, http.MethodDelete, cmPath(e, name), nil, ctJSON, body).obj(t)
		require.Equal(t, "ConfigMap", del["kind"], policy)
		require.Equal(t, []any{want}, metaOf(t, del)["finalizers"], policy)
		ts, _ := deletionMeta(t, del)
		require.NotEmpty(t, ts, policy)
		require.Equal(t, http.StatusOK, call(t, e, http.MethodGet, cmPath(e, name), nil, "", nil).code, "%s: stays", policy)
		mustCall(t, e, http.MethodPatch, cmPath(e, name), nil, ctMerge, []byte(`{"metadata":{"finalizers":null}}`))
		require.Equal(t, http.StatusNotFound, call(t, e, http.MethodGet, cmPath(e, name), nil, "", nil).code, policy)
	}
	mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, configMap("by-bg", nil)))
	mustCall(t, e, http.MethodDelete, cmPath(e, "by-bg"), url.Values{"propagationPolicy": {"Background"}}, "", nil)
	require.Equal(t, http.StatusNotFound, call(t, e, http.MethodGet, cmPath(e, "by-bg"), nil, "", nil).code)
}

// testGeneration: metadata.generation, which controllers compare with
// status.observedGeneration, starts at 1 and is bumped by spec changes only:
// not by labels, annotations (but a deployment's), the status subresource or a
// no-op update (which keeps the resourceVersion too). A configmap has none.
func testGeneration(t T, e *Env) {
	gen := func(o map[string]any) any { return metaOf(t, o)["generation"] }
	d := mustCall(t, e, http.MethodPost, deployPath(e, ""), nil, ctJSON, jsonBody(t, deployment("gen", 1, "app"))).obj(t)
	require.EqualValues(t, 1, gen(d))
	d = mustCall(t, e, http.MethodPatch, deployPath(e, "gen"), nil, ctMerge, []byte(`{"metadata":{"labels":{"tier":"web"}}}`)).obj(t)
	require.EqualValues(t, 1, gen(d), "labels")
	// The deployment strategy counts annotations as spec (they once carried rollbacks).
	d = mustCall(t, e, http.MethodPatch, deployPath(e, "gen"), nil, ctMerge, []byte(`{"metadata":{"annotations":{"note":"x"}}}`)).obj(t)
	require.EqualValues(t, 2, gen(d), "a deployment's annotations")
	d = mustCall(t, e, http.MethodPatch, deployPath(e, "gen")+"/status", nil, ctMerge,
		[]byte(`{"status":{"observedGeneration":2,"replicas":1}}`)).obj(t)
	require.EqualValues(t, 2, gen(d), "the status subresource")
	rv := metaOf(t, d)["resourceVersion"]
	d = mustCall(t, e, http.MethodPut, deployPath(e, "gen"), nil, ctJSON, jsonBody(t, d)).obj(t)
	require.EqualValues(t, 2, gen(d), "a no-op update")
	require.Equal(t, rv, metaOf(t, d)["resourceVersion"], "a no-op update keeps the resourceVersion")
	d = mustCall(t, e, http.MethodPatch, deployPath(e, "gen"), nil, ctMerge, []byte(`{"spec":{"replicas":4}}`)).obj(t)
	require.EqualValues(t, 3, gen(d), "a spec change")
	d = mustCall(t, e, http.MethodPatch, deployPath(e, "gen"), nil, ctMerge, []byte(`{"spec":{"replicas":4}}`)).obj(t)
	require.EqualValues(t, 3, gen(d), "a patch to the same spec")

	p := mustCall(t, e, http.MethodPost, podsPath(e, ""), nil, ctJSON, jsonBody(t, newPod(e.NS, "gen", nil))).obj(t)
	require.EqualValues(t, 1, gen(p))
	p = mustCall(t, e, http.MethodPatch, podsPath(e, "gen"), nil, ctMerge, []byte(`{"metadata":{"labels":{"a":"b"},"annotations":{"c":"d"}}}`)).obj(t)
	require.EqualValues(t, 1, gen(p), "a pod's labels and annotations")
	p = mustCall(t, e, http.MethodPatch, podsPath(e, "gen"), nil, ctMerge, []byte(`{"spec":{"activeDeadlineSeconds":600}}`)).obj(t)
	require.EqualValues(t, 2, gen(p), "a pod's spec")

	cm := mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, configMap("gen", map[string]string{"a": "1"}))).obj(t)
	require.Nil(t, gen(cm), "a configmap has no generation")
}
