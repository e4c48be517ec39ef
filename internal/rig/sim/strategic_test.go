package sim_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// containersOf returns a deployment's containers as {name: image} pairs in order
// and each container's env names.
func containersOf(t *testing.T, body []byte) (names []string, images map[string]string, env map[string][]string) {
	t.Helper()
	var d struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Name, Image string
						Env         []struct{ Name string } `json:"env"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	require.NoError(t, json.Unmarshal(body, &d), "%s", body)
	images, env = map[string]string{}, map[string][]string{}
	for _, c := range d.Spec.Template.Spec.Containers {
		names = append(names, c.Name)
		images[c.Name] = c.Image
		for _, e := range c.Env {
			env[c.Name] = append(env[c.Name], e.Name)
		}
	}
	return names, images, env
}

// TestStrategicMergePatch replays a sequence of strategic merge patches run
// against the real server and checks each result as it gave it.
func TestStrategicMergePatch(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	_, err := h.Server.Create("deployments.apps", []byte(`{"metadata":{"namespace":"p","name":"d1"},"spec":{"replicas":1,
		"selector":{"matchLabels":{"app":"d1"}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%"}},
		"template":{"metadata":{"labels":{"app":"d1"}},"spec":{"containers":[
		{"name":"a","image":"img-a","env":[{"name":"X","value":"1"}]},{"name":"b","image":"img-b"}]}}}}`))
	require.NoError(t, err)
	const path = "/apis/apps/v1/namespaces/p/deployments/d1"
	patch := func(p string) (int, []byte) {
		return do(t, h, "PATCH", path, "", []byte(p), "Content-Type", "application/strategic-merge-patch+json")
	}
	tests := []struct {
		name, patch string
		names       []string
		images      map[string]string
		env         map[string][]string
	}{
		{"merge by name, new items appended", `{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"img-b2"},{"name":"c","image":"img-c"}]}}}}`,
			[]string{"a", "b", "c"}, map[string]string{"a": "img-a", "b": "img-b2", "c": "img-c"}, map[string][]string{"a": {"X"}}},
		{"$patch delete", `{"spec":{"template":{"spec":{"containers":[{"name":"c","$patch":"delete"}]}}}}`,
			[]string{"a", "b"}, map[string]string{"a": "img-a", "b": "img-b2"}, map[string][]string{"a": {"X"}}},
		{"a new env item goes before the server's", `{"spec":{"template":{"spec":{"containers":[{"name":"a","env":[{"name":"Y","value":"2"}]}]}}}}`,
			[]string{"a", "b"}, map[string]string{"a": "img-a", "b": "img-b2"}, map[string][]string{"a": {"Y", "X"}}},
		{"$patch replace in a list", `{"spec":{"template":{"spec":{"containers":[{"name":"a","env":[{"name":"Z","value":"3"},{"$patch":"replace"}]}]}}}}`,
			[]string{"a", "b"}, map[string]string{"a": "img-a", "b": "img-b2"}, map[string][]string{"a": {"Z"}}},
		{"$setElementOrder", `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],"containers":[{"name":"a","image":"img-a2"}]}}}}`,
			[]string{"b", "a"}, map[string]string{"a": "img-a2", "b": "img-b2"}, map[string][]string{"a": {"Z"}}},
		{"deleting a missing item", `{"spec":{"template":{"spec":{"containers":[{"name":"x","$patch":"delete"}]}}}}`,
			[]string{"b", "a"}, map[string]string{"a": "img-a2", "b": "img-b2"}, map[string][]string{"a": {"Z"}}},
	}
	for _, tc := range tests {
		code, body := patch(tc.patch)
		require.Equal(t, 200, code, "%s: %s", tc.name, body)
		names, images, env := containersOf(t, body)
		require.Equal(t, tc.names, names, tc.name)
		require.Equal(t, tc.images, images, tc.name)
		require.Equal(t, tc.env, env, tc.name)
	}

	code, body := patch(`{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`)
	require.Equal(t, 200, code, "%s", body)
	require.Equal(t, map[string]any{"type": "Recreate"}, decodeMap(t, body)["spec"].(map[string]any)["strategy"])

	code, body = patch(`{"spec":{"template":{"spec":{"containers":[{"name":"b","resources":{"$patch":"replace","limits":{"cpu":"1"}}}]}}}}`)
	require.Equal(t, 200, code, "%s", body)
	require.Contains(t, string(body), `"resources":{"limits":{"cpu":"1"}}`)

	errs := []struct{ patch, want string }{
		{`{"spec":{"template":{"spec":{"containers":[{"image":"noname"}]}}}}`,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"map: map[image:noname] does not contain declared merge key: name","code":500}`},
		{`{"spec":{"template":{"spec":{"containers":[{"name":"a","$patch":"bogus"}]}}}}`,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"unknown patch type: bogus in map: map[$patch:bogus name:a]","code":500}`},
		{`{"spec":{"$retainKeys":["replicas"],"paused":true}}`,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid patch format of retainKeys","reason":"BadRequest","code":400}`},
		{`{bad`, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid JSON patch","reason":"BadRequest","code":400}`},
		{`[1]`, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"json: cannot unmarshal array into Go value of type map[string]interface {}","reason":"BadRequest","code":400}`},
	}
	for _, e := range errs {
		_, body := patch(e.patch)
		require.JSONEq(t, e.want, string(body), e.patch)
	}
}

// TestStrategicSets: finalizers merge as a set, new values first, and
// $deleteFromPrimitiveList and $setElementOrder apply to them.
func TestStrategicSets(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"p","name":"c"},"data":{"a":"1"}}`))
	require.NoError(t, err)
	steps := []struct{ patch, want string }{
		{`{"metadata":{"finalizers":["x.io/a"]}}`, `["x.io/a"]`},
		{`{"metadata":{"finalizers":["x.io/b"]}}`, `["x.io/b","x.io/a"]`},
		{`{"metadata":{"$deleteFromPrimitiveList/finalizers":["x.io/a"]}}`, `["x.io/b"]`},
		{`{"metadata":{"$setElementOrder/finalizers":["x.io/c","x.io/b"],"finalizers":["x.io/c"]}}`, `["x.io/c","x.io/b"]`},
		{`{"metadata":{"finalizers":null}}`, `null`},
	}
	for _, s := range steps {
		code, body := do(t, h, "PATCH", "/api/v1/namespaces/p/configmaps/c", "", []byte(s.patch), "Content-Type", "application/strategic-merge-patch+json")
		require.Equal(t, 200, code, "%s", body)
		got, _ := json.Marshal(decodeMap(t, body)["metadata"].(map[string]any)["finalizers"])
		require.JSONEq(t, s.want, string(got), s.patch)
	}
	code, body := do(t, h, "PATCH", "/api/v1/namespaces/p/configmaps/c", "", []byte(`{"data":{"$patch":"replace","only":"1"}}`),
		"Content-Type", "application/strategic-merge-patch+json")
	require.Equal(t, 200, code)
	require.Equal(t, map[string]any{"only": "1"}, decodeMap(t, body)["data"])
}

// TestPatchMediaTypes: custom resources take no strategic merge patch, and an
// unknown patch type is worded as the real server words it for each.
func TestPatchMediaTypes(t *testing.T) {
	h := simkit.Start(t, sim.Options{Resources: []sim.ResourceInfo{{Group: "example.com", Version: "v1",
		Resource: "widgets", Kind: "Widget", Namespaced: true}}})
	_, err := h.Server.Create("widgets.example.com", []byte(`{"metadata":{"namespace":"p","name":"w"},"spec":{"size":1}}`))
	require.NoError(t, err)
	_, err = h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"p","name":"c"}}`))
	require.NoError(t, err)
	const crMsg = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml","reason":"UnsupportedMediaType","code":415}`
	for _, ct := range []string{"application/strategic-merge-patch+json", "text/plain"} {
		code, body := do(t, h, "PATCH", "/apis/example.com/v1/namespaces/p/widgets/w", "", []byte(`{}`), "Content-Type", ct)
		require.Equal(t, 415, code)
		require.JSONEq(t, crMsg, string(body))
	}
	code, body := do(t, h, "PATCH", "/api/v1/namespaces/p/configmaps/c", "", []byte(`{}`), "Content-Type", "application/foo")
	require.Equal(t, 415, code)
	require.JSONEq(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"415: Unsupported Media Type","reason":"UnsupportedMediaType","details":{},"code":415}`, string(body))
	code, body = do(t, h, "PATCH", "/apis/example.com/v1/namespaces/p/widgets/w", "", []byte(`{"spec":{"size":2}}`), "Content-Type", "application/merge-patch+json")
	require.Equal(t, 200, code, "%s", body)
}

// TestJSONPatch: add, remove, replace (of a missing member too), test, move and
// copy; an operation that does not apply is the real server's 422.
func TestJSONPatch(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"p","name":"c"},"data":{"only":"1"}}`))
	require.NoError(t, err)
	jp := func(p string) (int, []byte) {
		return do(t, h, "PATCH", "/api/v1/namespaces/p/configmaps/c", "", []byte(p), "Content-Type", "application/json-patch+json")
	}
	code, body := jp(`[{"op":"replace","path":"/data/missing","value":"x"},{"op":"move","from":"/data/only","path":"/data/moved"},
		{"op":"copy","from":"/data/moved","path":"/data/copied"},{"op":"test","path":"/data/copied","value":"1"}]`)
	require.Equal(t, 200, code, "%s", body)
	require.Equal(t, map[string]any{"missing": "x", "moved": "1", "copied": "1"}, decodeMap(t, body)["data"])
	const unprocessable = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server rejected our request due to an error in our request","reason":"Invalid","details":{},"code":422}`
	for _, p := range []string{`[{"op":"test","path":"/data/moved","value":"nope"}]`, `[{"op":"remove","path":"/data/nope"}]`,
		`[{"op":"add","path":"/nope/x","value":"x"}]`, `[{"op":"bogus","path":"/data/x"}]`} {
		code, body := jp(p)
		require.Equal(t, 422, code, p)
		require.JSONEq(t, unprocessable, string(body), p)
	}
	code, body = jp(`{"op":"bogus"}`)
	require.Equal(t, 400, code)
	require.Equal(t, "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp", decodeMap(t, body)["message"])
}
