package suite

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/stretchr/testify/require"
)

// The write cases: raw REST writes through the admin client, compared with the
// real server's captures (../testdata/real-apiserver) where there is one:
// conflicts, each patch type, server-side apply and field ownership, the status
// and scale subresources, delete preconditions, dry runs and validation.
func writeCases() []Case {
	return []Case{
		{Name: "write/update-stale-rv-is-409", Run: testWriteStaleUpdate},
		{Name: "write/create-existing-is-409", Run: testWriteCreateExisting},
		{Name: "write/patch-configmap", Run: testWritePatchConfigMap},
		{Name: "write/patch-deployment", Run: testWritePatchDeployment},
		{Name: "write/apply-conflict-force-prune", Run: testWriteApply},
		{Name: "write/status-subresource", Run: testWriteStatus},
		{Name: "write/delete-precondition-is-409", Run: testWriteDeletePrecondition},
		{Name: "write/dry-run-leaves-no-trace", Run: testWriteDryRun},
		{Name: "write/invalid-is-422", Run: testWriteInvalid},
		{Name: "write/scale-subresource", Run: testWriteScale},
		{Name: "write/retried-after-a-503-is-uncertain", Run: testRetriedAfter503IsUncertain},
	}
}

// configMap is a ConfigMap body.
func configMap(name string, data map[string]string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": data}
}

// deployment is a valid Deployment body with containers named as given.
func deployment(name string, replicas int, containers ...string) map[string]any {
	var cs []any
	for _, c := range containers {
		cs = append(cs, map[string]any{"name": c, "image": "registry.invalid/" + c + ":1"})
	}
	labels := map[string]any{"app": name}
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"replicas": replicas, "selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": cs}}}}
}

// dataOf is a configmap's data.
func dataOf(t T, o map[string]any) map[string]any {
	t.Helper()
	d, _ := o["data"].(map[string]any)
	return d
}

// testWriteStaleUpdate: a PUT with a stale resourceVersion is 409 Conflict,
// field for field as status-409-update-stale-rv.json.
func testWriteStaleUpdate(t T, e *Env) {
	created := mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, configMap("settings", map[string]string{"a": "1"}))).obj(t)
	stale := metaOf(t, created)["resourceVersion"]
	upd := configMap("settings", map[string]string{"a": "2"})
	upd["metadata"].(map[string]any)["resourceVersion"] = stale
	mustCall(t, e, http.MethodPut, cmPath(e, "settings"), nil, ctJSON, jsonBody(t, upd))
	upd["data"] = map[string]string{"a": "3"}
	a := call(t, e, http.MethodPut, cmPath(e, "settings"), nil, ctJSON, jsonBody(t, upd))
	require.Equal(t, http.StatusConflict, a.code, "%s", a.body)
	want := captured(t, "status-409-update-stale-rv.json")
	got := a.status(t)
	requireSameStatus(t, want, got, "stale PUT")
	require.Equal(t, want.Message, got.Message, "the capture names the same configmap")
	require.Equal(t, "2", dataOf(t, mustCall(t, e, http.MethodGet, cmPath(e, "settings"), nil, "", nil).obj(t))["a"])
}

// testWriteCreateExisting: a POST of an existing name is 409 AlreadyExists
// (status-409-create-exists.json).
func testWriteCreateExisting(t T, e *Env) {
	body := jsonBody(t, configMap("settings", map[string]string{"a": "1"}))
	mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, body)
	a := call(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, body)
	require.Equal(t, http.StatusConflict, a.code, "%s", a.body)
	want := captured(t, "status-409-create-exists.json")
	got := a.status(t)
	requireSameStatus(t, want, got, "POST of an existing name")
	require.Equal(t, want.Message, got.Message)
}

// testWritePatchConfigMap: a merge patch, a JSON patch (add, replace, remove,
// test), a failing test (422, nothing written) and strategic merge patches of a
// configmap.
func testWritePatchConfigMap(t T, e *Env) {
	mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, configMap("p", map[string]string{"a": "1", "b": "1"})))
	p := cmPath(e, "p")
	o := mustCall(t, e, http.MethodPatch, p, nil, ctMerge, []byte(`{"data":{"a":null,"c":"3"}}`)).obj(t)
	require.Equal(t, map[string]any{"b": "1", "c": "3"}, dataOf(t, o), "merge patch: null removes")

	o = mustCall(t, e, http.MethodPatch, p, nil, ctJSONPatch, []byte(`[{"op":"add","path":"/data/d","value":"4"},
		{"op":"replace","path":"/data/b","value":"2"},{"op":"remove","path":"/data/c"},{"op":"test","path":"/data/b","value":"2"}]`)).obj(t)
	require.Equal(t, map[string]any{"b": "2", "d": "4"}, dataOf(t, o), "JSON patch")
	rv := metaOf(t, o)["resourceVersion"]

	a := call(t, e, http.MethodPatch, p, nil, ctJSONPatch, []byte(`[{"op":"replace","path":"/data/b","value":"9"},{"op":"test","path":"/data/d","value":"nope"}]`))
	require.Equal(t, http.StatusUnprocessableEntity, a.code, "a failing test: %s", a.body)
	st := a.status(t)
	require.Equal(t, "Invalid", st.Reason)
	require.Equal(t, "the server rejected our request due to an error in our request", st.Message)
	o = mustCall(t, e, http.MethodGet, p, nil, "", nil).obj(t)
	require.Equal(t, rv, metaOf(t, o)["resourceVersion"], "a failed JSON patch writes nothing")
	require.Equal(t, map[string]any{"b": "2", "d": "4"}, dataOf(t, o))

	o = mustCall(t, e, http.MethodPatch, p, nil, ctStrategic, []byte(`{"data":{"e":"5"}}`)).obj(t)
	require.Equal(t, map[string]any{"b": "2", "d": "4", "e": "5"}, dataOf(t, o), "strategic merge patch merges a map")
	o = mustCall(t, e, http.MethodPatch, p, nil, ctStrategic, []byte(`{"data":{"$patch":"replace","only":"1"}}`)).obj(t)
	require.Equal(t, map[string]any{"only": "1"}, dataOf(t, o), "$patch: replace")
}

// containerImages are a deployment's containers as name=image, in order.
func containerImages(t T, o map[string]any) []string {
	t.Helper()
	b, err := json.Marshal(o)
	require.NoError(t, err)
	var d struct {
		Spec struct {
			Replicas int `json:"replicas"`
			Template struct {
				Spec struct {
					Containers []struct{ Name, Image string } `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	require.NoError(t, json.Unmarshal(b, &d))
	var out []string
	for _, c := range d.Spec.Template.Spec.Containers {
		out = append(out, c.Name+"="+c.Image)
	}
	return out
}

// testWritePatchDeployment: each patch type on a deployment; the strategic
// merge patch merges containers by name (and deletes one by name), a merge
// patch replaces the list.
func testWritePatchDeployment(t T, e *Env) {
	mustCall(t, e, http.MethodPost, deployPath(e, ""), nil, ctJSON, jsonBody(t, deployment("web", 1, "app", "proxy")))
	p := deployPath(e, "web")
	o := mustCall(t, e, http.MethodPatch, p, nil, ctMerge, []byte(`{"metadata":{"labels":{"tier":"web"}},"spec":{"replicas":2}}`)).obj(t)
	require.Equal(t, map[string]any{"tier": "web"}, metaOf(t, o)["labels"])
	require.EqualValues(t, 2, o["spec"].(map[string]any)["replicas"])

	o = mustCall(t, e, http.MethodPatch, p, nil, ctJSONPatch, []byte(`[{"op":"test","path":"/spec/replicas","value":2},
		{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.invalid/app:2"}]`)).obj(t)
	require.Equal(t, []string{"app=registry.invalid/app:2", "proxy=registry.invalid/proxy:1"}, containerImages(t, o), "JSON patch")

	o = mustCall(t, e, http.MethodPatch, p, nil, ctStrategic, []byte(`{"spec":{"template":{"spec":{"containers":[
		{"name":"proxy","image":"registry.invalid/proxy:2"},{"name":"extra","image":"registry.invalid/extra:1"}]}}}}`)).obj(t)
	require.Equal(t, []string{"app=registry.invalid/app:2", "proxy=registry.invalid/proxy:2", "extra=registry.invalid/extra:1"},
		containerImages(t, o), "a strategic merge patch merges containers by name, new ones last")
	o = mustCall(t, e, http.MethodPatch, p, nil, ctStrategic, []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","$patch":"delete"}]}}}}`)).obj(t)
	require.Equal(t, []string{"proxy=registry.invalid/proxy:2", "extra=registry.invalid/extra:1"}, containerImages(t, o), "$patch: delete by name")

	o = mustCall(t, e, http.MethodPatch, p, nil, ctMerge, []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"solo","image":"registry.invalid/solo:1"}]}}}}`)).obj(t)
	require.Equal(t, []string{"solo=registry.invalid/solo:1"}, containerImages(t, o), "a merge patch replaces the list")
}

// testWriteApply: server-side apply by two managers: a conflict naming the
// field and its owner (as status-409-apply-conflict.json for an Update owner),
// force taking it, shared ownership, and a re-apply without a field dropping it.
func testWriteApply(t T, e *Env) {
	apply := func(manager string, force bool, data map[string]string) answer {
		q := url.Values{"fieldManager": {manager}}
		if force {
			q.Set("force", "true")
		}
		return call(t, e, http.MethodPatch, cmPath(e, "applied"), q, ctApply, jsonBody(t, configMap("applied", data)))
	}
	a := apply("mgr-a", false, map[string]string{"a": "1", "b": "x"})
	require.Equal(t, http.StatusCreated, a.code, "apply creates: %s", a.body)
	mf := managedFields(t, a.body)
	require.Equal(t, map[string]string{"mgr-a/Apply": `{"f:data":{"f:a":{},"f:b":{}}}`}, fieldsOf(mf))
	require.Equal(t, "v1", mf["mgr-a/Apply"].APIVersion)
	require.Equal(t, "FieldsV1", mf["mgr-a/Apply"].FieldsType)
	require.NotEmpty(t, mf["mgr-a/Apply"].Time)

	a = apply("mgr-b", false, map[string]string{"a": "2"})
	require.Equal(t, http.StatusConflict, a.code, "%s", a.body)
	st := a.status(t)
	requireSameStatus(t, captured(t, "status-409-apply-conflict.json"), st, "apply conflict")
	require.Equal(t, `Apply failed with 1 conflict: conflict with "mgr-a": .data.a`, st.Message)
	require.Equal(t, "FieldManagerConflict", st.Details.Causes[0].Reason)
	require.Equal(t, `conflict with "mgr-a"`, st.Details.Causes[0].Message)
	require.Equal(t, ".data.a", st.Details.Causes[0].Field)

	a = apply("mgr-b", true, map[string]string{"a": "2"})
	require.Equal(t, http.StatusOK, a.code, "force: %s", a.body)
	require.Equal(t, map[string]any{"a": "2", "b": "x"}, dataOf(t, a.obj(t)))
	require.Equal(t, map[string]string{"mgr-a/Apply": `{"f:data":{"f:b":{}}}`, "mgr-b/Apply": `{"f:data":{"f:a":{}}}`},
		fieldsOf(managedFields(t, a.body)), "mgr-b owns a now")

	// mgr-a applies a with mgr-b's value: no conflict, the field is shared.
	a = apply("mgr-a", false, map[string]string{"a": "2", "b": "x"})
	require.Equal(t, http.StatusOK, a.code, "%s", a.body)
	require.Equal(t, `{"f:data":{"f:a":{},"f:b":{}}}`, fieldsOf(managedFields(t, a.body))["mgr-a/Apply"])
	// Re-applied without b (owned by mgr-a alone: removed) and without a
	// (shared with mgr-b: kept), mgr-a owns only c.
	a = apply("mgr-a", false, map[string]string{"c": "3"})
	require.Equal(t, http.StatusOK, a.code, "%s", a.body)
	require.Equal(t, map[string]any{"a": "2", "c": "3"}, dataOf(t, a.obj(t)))
	require.Equal(t, map[string]string{"mgr-a/Apply": `{"f:data":{"f:c":{}}}`, "mgr-b/Apply": `{"f:data":{"f:a":{}}}`},
		fieldsOf(managedFields(t, a.body)))

	// The capture's case: the owner is an Update manager (a create by kubectl's
	// client-side apply), named with its apiVersion.
	mustCall(t, e, http.MethodPost, cmPath(e, ""), url.Values{"fieldManager": {"kubectl-client-side-apply"}}, ctJSON,
		jsonBody(t, configMap("settings", map[string]string{"a": "1"})))
	a = call(t, e, http.MethodPatch, cmPath(e, "settings"), url.Values{"fieldManager": {"mgr-b"}}, ctApply,
		jsonBody(t, configMap("settings", map[string]string{"a": "2"})))
	require.Equal(t, http.StatusConflict, a.code, "%s", a.body)
	want := captured(t, "status-409-apply-conflict.json")
	got := a.status(t)
	requireSameStatus(t, want, got, "apply conflict with an Update manager")
	require.Equal(t, want.Message, got.Message)
	require.Equal(t, want.Details.Causes, got.Details.Causes)
}

// testWriteStatus: a deployment's status is written only through /status, and
// a PUT of the deployment leaves it as it is.
func testWriteStatus(t T, e *Env) {
	d := deployment("st", 1, "app")
	d["status"] = map[string]any{"replicas": 5}
	o := mustCall(t, e, http.MethodPost, deployPath(e, ""), nil, ctJSON, jsonBody(t, d)).obj(t)
	require.Empty(t, o["status"], "a create sets the initial status")
	gen := metaOf(t, o)["generation"]

	o["status"] = map[string]any{"replicas": 2, "readyReplicas": 1, "observedGeneration": 1}
	o["spec"].(map[string]any)["replicas"] = 7
	o = mustCall(t, e, http.MethodPut, deployPath(e, "st")+"/status", nil, ctJSON, jsonBody(t, o)).obj(t)
	require.EqualValues(t, 2, o["status"].(map[string]any)["replicas"], "PUT /status writes the status")
	require.EqualValues(t, 1, o["spec"].(map[string]any)["replicas"], "PUT /status leaves the spec")
	require.Equal(t, gen, metaOf(t, o)["generation"])
	entries := managedFields(t, mustCall(t, e, http.MethodGet, deployPath(e, "st"), nil, "", nil).body)
	var statusEntry bool
	for _, m := range entries {
		statusEntry = statusEntry || (m.Subresource == "status" && m.Operation == "Update")
	}
	require.True(t, statusEntry, "an Update entry of subresource status: %v", entries)

	o["status"] = map[string]any{"replicas": 9}
	o["spec"].(map[string]any)["replicas"] = 3
	o = mustCall(t, e, http.MethodPut, deployPath(e, "st"), nil, ctJSON, jsonBody(t, o)).obj(t)
	require.EqualValues(t, 2, o["status"].(map[string]any)["replicas"], "PUT of the deployment leaves the status")
	require.EqualValues(t, 3, o["spec"].(map[string]any)["replicas"])
	require.NotEqual(t, gen, metaOf(t, o)["generation"], "a spec change is a new generation")

	o = mustCall(t, e, http.MethodPatch, deployPath(e, "st")+"/status", nil, ctMerge, []byte(`{"status":{"replicas":3},"spec":{"replicas":8}}`)).obj(t)
	require.EqualValues(t, 3, o["status"].(map[string]any)["replicas"])
	require.EqualValues(t, 3, o["spec"].(map[string]any)["replicas"], "PATCH /status leaves the spec")
}

// testWriteDeletePrecondition: a delete with a wrong uid or resourceVersion
// precondition is 409 (status-409-delete-precondition.json); with the right uid
// it deletes and answers a Status of Success naming the object.
func testWriteDeletePrecondition(t T, e *Env) {
	o := mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, configMap("settings", nil))).obj(t)
	uid, rv := metaOf(t, o)["uid"].(string), metaOf(t, o)["resourceVersion"].(string)
	const zero = "00000000-0000-0000-0000-000000000000"
	a := call(t, e, http.MethodDelete, cmPath(e, "settings"), nil, ctJSON, []byte(`{"preconditions":{"uid":"`+zero+`"}}`))
	require.Equal(t, http.StatusConflict, a.code, "%s", a.body)
	want := captured(t, "status-409-delete-precondition.json")
	got := a.status(t)
	requireSameStatus(t, want, got, "uid precondition")
	recorded := regexp.MustCompile(`in record \(([0-9a-f-]+)\)`).FindStringSubmatch(want.Message)
	require.Len(t, recorded, 2, "the capture names the recorded uid: %s", want.Message)
	require.Equal(t, strings.Replace(want.Message, recorded[1], uid, 1), got.Message, "the capture's message with this object's uid")

	a = call(t, e, http.MethodDelete, cmPath(e, "settings"), nil, ctJSON, []byte(`{"preconditions":{"resourceVersion":"1"}}`))
	require.Equal(t, http.StatusConflict, a.code, "%s", a.body)
	require.Equal(t, `Operation cannot be fulfilled on ConfigMap "settings": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (`+
		rv+`). The object might have been modified`, a.status(t).Message)

	a = mustCall(t, e, http.MethodDelete, cmPath(e, "settings"), url.Values{"propagationPolicy": {"Background"}}, ctJSON,
		[]byte(`{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"preconditions":{"uid":"`+uid+`","resourceVersion":"`+rv+`"}}`))
	got = a.status(t)
	require.Equal(t, "Success", got.Status, "%s", a.body)
	require.Equal(t, "settings", got.Details.Name)
	require.Equal(t, "configmaps", got.Details.Kind)
	require.Equal(t, uid, got.Details.UID)
	require.Equal(t, http.StatusNotFound, call(t, e, http.MethodGet, cmPath(e, "settings"), nil, "", nil).code)

	a = call(t, e, http.MethodDelete, cmPath(e, "x"), url.Values{"propagationPolicy": {"Bogus"}}, "", nil)
	require.Equal(t, http.StatusUnprocessableEntity, a.code, "%s", a.body)
	require.Equal(t, `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"`,
		a.status(t).Message)
}

// testWriteDryRun: dryRun=All on create, update, patch, apply and delete
// answers what the write would produce, and leaves no trace: a GET shows
// nothing changed and a watch opened before sees no event before a real write
// made afterwards (the fence).
func testWriteDryRun(t T, e *Env) {
	base := mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, configMap("base", map[string]string{"a": "1"}))).obj(t)
	rv := metaOf(t, base)["resourceVersion"].(string)
	w := openRawWatch(t, e, cmPath(e, ""), rv)
	dry := url.Values{"dryRun": {"All"}}

	a := mustCall(t, e, http.MethodPost, cmPath(e, ""), dry, ctJSON, jsonBody(t, configMap("dry-new", map[string]string{"n": "1"})))
	require.Equal(t, http.StatusCreated, a.code)
	o := a.obj(t)
	require.Equal(t, "dry-new", metaOf(t, o)["name"])
	require.NotContains(t, metaOf(t, o), "resourceVersion", "a dry-run create has no resourceVersion")
	require.NotEmpty(t, metaOf(t, o)["uid"])
	require.Equal(t, map[string]any{"n": "1"}, dataOf(t, o))

	upd := configMap("base", map[string]string{"a": "2"})
	o = mustCall(t, e, http.MethodPut, cmPath(e, "base"), dry, ctJSON, jsonBody(t, upd)).obj(t)
	require.Equal(t, map[string]any{"a": "2"}, dataOf(t, o), "dry-run update")
	require.Equal(t, rv, metaOf(t, o)["resourceVersion"])

	o = mustCall(t, e, http.MethodPatch, cmPath(e, "base"), dry, ctMerge, []byte(`{"data":{"p":"1"}}`)).obj(t)
	require.Equal(t, map[string]any{"a": "1", "p": "1"}, dataOf(t, o), "dry-run patch")
	require.Equal(t, rv, metaOf(t, o)["resourceVersion"])

	q := url.Values{"dryRun": {"All"}, "fieldManager": {"dry-mgr"}}
	o = mustCall(t, e, http.MethodPatch, cmPath(e, "base"), q, ctApply, jsonBody(t, configMap("base", map[string]string{"x": "1"}))).obj(t)
	require.Equal(t, map[string]any{"a": "1", "x": "1"}, dataOf(t, o), "dry-run apply")
	require.Contains(t, fieldsOf(managedFields(t, jsonBody(t, o))), "dry-mgr/Apply")
	a = mustCall(t, e, http.MethodPatch, cmPath(e, "dry-applied"), q, ctApply, jsonBody(t, configMap("dry-applied", map[string]string{"x": "1"})))
	require.Equal(t, http.StatusCreated, a.code, "a dry-run apply that would create")

	st := mustCall(t, e, http.MethodDelete, cmPath(e, "base"), dry, "", nil).status(t)
	require.Equal(t, "Success", st.Status)
	require.Equal(t, "base", st.Details.Name)

	o = mustCall(t, e, http.MethodGet, cmPath(e, "base"), nil, "", nil).obj(t)
	require.Equal(t, rv, metaOf(t, o)["resourceVersion"], "nothing changed")
	require.Equal(t, map[string]any{"a": "1"}, dataOf(t, o))
	for _, n := range []string{"dry-new", "dry-applied"} {
		require.Equal(t, http.StatusNotFound, call(t, e, http.MethodGet, cmPath(e, n), nil, "", nil).code, "%s was not created", n)
	}
	mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, configMap("fence", nil)))
	ev := w.next(t)
	require.Equal(t, "ADDED", ev.Type, "the first event after the dry runs is the fence's")
	require.Equal(t, "fence", nameOfEvent(ev), "the first event after the dry runs is the fence's")
}

// testWriteInvalid: a ConfigMap with an invalid name and data key is 422 with
// one cause per field, as status-422-invalid.json; namespaces' names are labels.
func testWriteInvalid(t T, e *Env) {
	a := call(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, configMap("Bad_Name", map[string]string{"a b": "1"})))
	require.Equal(t, http.StatusUnprocessableEntity, a.code, "%s", a.body)
	want := captured(t, "status-422-invalid.json")
	got := a.status(t)
	requireSameStatus(t, want, got, "invalid configmap")
	require.Equal(t, want.Message, got.Message)
	require.Equal(t, want.Details.Causes, got.Details.Causes)

	a = call(t, e, http.MethodPost, "/api/v1/namespaces", nil, ctJSON, []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a.b"}}`))
	require.Equal(t, http.StatusUnprocessableEntity, a.code, "%s", a.body)
	got = a.status(t)
	require.Equal(t, `Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots`, got.Message)
	require.Equal(t, "metadata.name", got.Details.Causes[0].Field)
	require.Equal(t, "FieldValueInvalid", got.Details.Causes[0].Reason)
}

// testWriteScale: the scale subresource reads and writes a deployment's
// spec.replicas as an autoscaling/v1 Scale.
func testWriteScale(t T, e *Env) {
	d := mustCall(t, e, http.MethodPost, deployPath(e, ""), nil, ctJSON, jsonBody(t, deployment("sc", 1, "app"))).obj(t)
	p := deployPath(e, "sc") + "/scale"
	sc := mustCall(t, e, http.MethodGet, p, nil, "", nil).obj(t)
	require.Equal(t, "Scale", sc["kind"])
	require.Equal(t, "autoscaling/v1", sc["apiVersion"])
	md := metaOf(t, sc)
	for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		require.Equal(t, metaOf(t, d)[k], md[k], "the Scale's metadata.%s is the deployment's", k)
	}
	require.EqualValues(t, 1, sc["spec"].(map[string]any)["replicas"])
	require.Equal(t, map[string]any{"replicas": float64(0), "selector": "app=sc"}, sc["status"])

	sc["spec"] = map[string]any{"replicas": 3}
	sc = mustCall(t, e, http.MethodPut, p, url.Values{"fieldManager": {"scaler"}}, ctJSON, jsonBody(t, sc)).obj(t)
	require.EqualValues(t, 3, sc["spec"].(map[string]any)["replicas"])
	d = mustCall(t, e, http.MethodGet, deployPath(e, "sc"), nil, "", nil).obj(t)
	require.EqualValues(t, 3, d["spec"].(map[string]any)["replicas"], "the deployment follows")
	require.Equal(t, metaOf(t, d)["resourceVersion"], metaOf(t, sc)["resourceVersion"])

	sc = mustCall(t, e, http.MethodPatch, p, url.Values{"fieldManager": {"scaler"}}, ctMerge, []byte(`{"spec":{"replicas":4}}`)).obj(t)
	require.EqualValues(t, 4, sc["spec"].(map[string]any)["replicas"])
	body := mustCall(t, e, http.MethodGet, deployPath(e, "sc"), nil, "", nil).body
	entry, ok := managedFields(t, body)["scaler/Update/scale"]
	require.True(t, ok, "an Update entry of subresource scale: %s", body)
	require.Equal(t, `{"f:spec":{"f:replicas":{}}}`, string(entry.FieldsV1))
	require.Equal(t, "apps/v1", entry.APIVersion)

	a := call(t, e, http.MethodPut, p, nil, ctJSON, []byte(`{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"sc","resourceVersion":"1"},"spec":{"replicas":2}}`))
	require.Equal(t, http.StatusConflict, a.code, "a stale resourceVersion: %s", a.body)
}
