package sim_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// TestScaleSubresource: GET, PUT and PATCH of <object>/scale read and write the
// object's spec.replicas, in the shape the real server answers.
func TestScaleSubresource(t *testing.T) {
	h := simkit.Start(t, sim.Options{Clock: fixedClock})
	obj, err := h.Server.Create("deployments.apps", []byte(`{"metadata":{"namespace":"p","name":"d1"},"spec":{"replicas":1,
		"selector":{"matchLabels":{"app":"d1"},"matchExpressions":[{"key":"tier","operator":"In","values":["b","a"]}]},
		"template":{"metadata":{"labels":{"app":"d1","tier":"a"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`))
	require.NoError(t, err)
	const path = "/apis/apps/v1/namespaces/p/deployments/d1/scale"
	want := func(rv string, replicas int) string {
		return `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"d1","namespace":"p","uid":"` + obj.UID +
			`","resourceVersion":"` + rv + `","creationTimestamp":"2026-12-01T12:03:40Z"},"spec":{"replicas":` + strconvU(uint64(replicas)) +
			`},"status":{"replicas":0,"selector":"app=d1,tier in (a,b)"}}`
	}
	code, body := do(t, h, "GET", path, "", nil)
	require.Equal(t, 200, code, "%s", body)
	require.JSONEq(t, want(strconvU(obj.ResourceVersion), 1), string(body))

	code, body = do(t, h, "PUT", path, "", []byte(`{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"d1","namespace":"p"},"spec":{"replicas":3}}`),
		"User-Agent", "kwatch-fixture")
	require.Equal(t, 200, code, "%s", body)
	rv := h.Server.ResourceVersion()
	require.JSONEq(t, want(strconvU(rv), 3), string(body))

	code, body = do(t, h, "PATCH", path, "", []byte(`{"spec":{"replicas":4}}`), "Content-Type", "application/merge-patch+json", "User-Agent", "kwatch-fixture")
	require.Equal(t, 200, code, "%s", body)
	code, body = do(t, h, "PATCH", path, "", []byte(`[{"op":"replace","path":"/spec/replicas","value":5}]`), "Content-Type", "application/json-patch+json",
		"User-Agent", "kwatch-fixture")
	require.Equal(t, 200, code, "%s", body)
	d := getMap(t, h, "/apis/apps/v1/namespaces/p/deployments/d1")
	require.EqualValues(t, 5, d["spec"].(map[string]any)["replicas"])
	got, err := h.Server.Get("deployments.apps", "p", "d1")
	require.NoError(t, err)
	require.Contains(t, string(got.JSON), `{"manager":"kwatch-fixture","operation":"Update","apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}},"subresource":"scale"}`,
		"the scale entry has no time, as on the real server")

	code, body = do(t, h, "PUT", path, "", []byte(`{"metadata":{"name":"d1","resourceVersion":"1"},"spec":{"replicas":2}}`))
	require.Equal(t, 409, code, "a stale resourceVersion: %s", body)
	code, body = do(t, h, "PUT", path, "", []byte(`{"metadata":{"name":"d1"},"spec":{"replicas":-1}}`))
	require.Equal(t, 422, code, "%s", body)
	require.Equal(t, `Scale.autoscaling "d1" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0`, decodeMap(t, body)["message"])
	code, _ = do(t, h, "DELETE", path, "", nil)
	require.Equal(t, 405, code)
	code, _ = do(t, h, "GET", "/apis/apps/v1/namespaces/p/deployments/nope/scale", "", nil)
	require.Equal(t, 404, code)
	code, _ = do(t, h, "GET", "/api/v1/namespaces/p/pods/x/scale", "", nil)
	require.Equal(t, 404, code, "pods have no scale subresource")

	for _, kind := range []string{"replicasets", "statefulsets"} {
		_, err := h.Server.Create(kind+".apps", []byte(`{"metadata":{"namespace":"p","name":"x"},"spec":{"replicas":2,"selector":{"matchLabels":{"a":"b"}}}}`))
		require.NoError(t, err)
		sc := getMap(t, h, "/apis/apps/v1/namespaces/p/"+kind+"/x/scale")
		require.EqualValues(t, 2, sc["spec"].(map[string]any)["replicas"], kind)
		require.Equal(t, "a=b", sc["status"].(map[string]any)["selector"], kind)
	}

	disc := getMap(t, h, "/apis/apps/v1")
	var names []string
	for _, r := range disc["resources"].([]any) {
		rm := r.(map[string]any)
		if strings.HasSuffix(rm["name"].(string), "/scale") {
			require.Equal(t, "autoscaling", rm["group"])
			require.Equal(t, "Scale", rm["kind"])
			names = append(names, rm["name"].(string))
		}
	}
	require.Equal(t, []string{"deployments/scale", "replicasets/scale", "statefulsets/scale"}, names)
}
