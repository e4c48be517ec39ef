package sim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// podJSON builds a pod body with the given spec and status members.
func podJSON(name, spec, status string) []byte {
	b := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `","namespace":"demo"},"spec":` + spec
	if status != "" {
		b += `,"status":` + status
	}
	return []byte(b + "}")
}

func container(name, resources string) string {
	return `{"name":"` + name + `","image":"registry.invalid/pause","resources":` + resources + `}`
}

func TestPodCreateSetsPendingAndQOS(t *testing.T) {
	const (
		none      = `{}`
		burstable = `{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"memory":"256Mi"}}`
		guarantee = `{"requests":{"cpu":"1","memory":"1Gi"},"limits":{"cpu":"1000m","memory":"1024Mi"}}`
		limitOnly = `{"limits":{"cpu":"500m","memory":"64Mi"}}`
	)
	tests := []struct {
		name, spec, status, want string
	}{
		{"no resources, empty status", `{"containers":[` + container("c", none) + `]}`, `{}`, "BestEffort"},
		{"no status at all", `{"containers":[` + container("c", none) + `]}`, "", "BestEffort"},
		{"client status discarded", `{"containers":[` + container("c", none) + `]}`,
			`{"phase":"Running","podIP":"10.0.0.1","qosClass":"Guaranteed"}`, "BestEffort"},
		{"requests below limits", `{"containers":[` + container("c", burstable) + `]}`, `{}`, "Burstable"},
		{"equal requests and limits in other units", `{"containers":[` + container("c", guarantee) + `]}`, `{}`, "Guaranteed"},
		{"limits only: requests default to them", `{"containers":[` + container("c", limitOnly) + `]}`, `{}`, "Guaranteed"},
		{"only cpu set", `{"containers":[` + container("c", `{"requests":{"cpu":"1"},"limits":{"cpu":"1"}}`) + `]}`, `{}`, "Burstable"},
		{"only other resources", `{"containers":[` + container("c", `{"requests":{"ephemeral-storage":"1Gi"}}`) + `]}`, `{}`, "BestEffort"},
		{"guaranteed and best-effort containers", `{"containers":[` + container("a", guarantee) + `,` + container("b", none) + `]}`, `{}`, "Burstable"},
		{"init container counts", `{"initContainers":[` + container("i", none) + `],"containers":[` + container("c", guarantee) + `]}`, `{}`, "Burstable"},
		{"pod-level resources decide", `{"resources":{"limits":{"cpu":"2","memory":"2Gi"}},"containers":[` + container("c", none) + `]}`, `{}`, "Guaranteed"},
		{"pod-level without cpu or memory is ignored", `{"resources":{"limits":{"hugepages-2Mi":"2Mi"}},"containers":[` + container("c", burstable) + `]}`, `{}`, "Burstable"},
		{"numbers and exponents", `{"containers":[` + container("c", `{"requests":{"cpu":2,"memory":"1e9"},"limits":{"cpu":"2","memory":"1G"}}`) + `]}`, `{}`, "Guaranteed"},
	}
	h := simkit.Start(t, sim.Options{})
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := "p" + strconvU(uint64(i))
			code, body := do(t, h, "POST", "/api/v1/namespaces/demo/pods", "", podJSON(name, tc.spec, tc.status),
				"Content-Type", "application/json")
			require.Equal(t, 201, code, "%s", body)
			got := decodeMap(t, body)["status"]
			require.Equal(t, map[string]any{"phase": "Pending", "qosClass": tc.want}, got)

			obj, err := h.Server.Create("pods", podJSON(name+"-inproc", tc.spec, tc.status))
			require.NoError(t, err)
			require.Equal(t, map[string]any{"phase": "Pending", "qosClass": tc.want}, decodeMap(t, obj.JSON)["status"],
				"the in-process Create behaves the same")
		})
	}
}

func TestPodCreateDefaultsRequestsFromLimits(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	obj, err := h.Server.Create("pods", podJSON("p", `{"containers":[`+
		container("c", `{"requests":{"cpu":"100m"},"limits":{"cpu":"200m","memory":"64Mi"}}`)+`]}`, ""))
	require.NoError(t, err)
	res := decodeMap(t, obj.JSON)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["resources"]
	require.Equal(t, map[string]any{
		"requests": map[string]any{"cpu": "100m", "memory": "64Mi"},
		"limits":   map[string]any{"cpu": "200m", "memory": "64Mi"},
	}, res)
}

func TestPodCreateBadResources(t *testing.T) {
	tests := []struct {
		name, spec string
		code       int
		msg        string
	}{
		{"unparsable quantity", `{"containers":[` + container("c", `{"limits":{"cpu":"lots"}}`) + `]}`, 400,
			`spec.containers[0].resources.limits[cpu]: quantities must match the regular expression`},
		{"unknown suffix", `{"containers":[` + container("c", `{"requests":{"memory":"1KB"}}`) + `]}`, 400, `unknown suffix "KB"`},
		{"huge exponent", `{"containers":[` + container("c", `{"requests":{"memory":"1e999999"}}`) + `]}`, 400, "limit of 100"},
		{"quantity of the wrong type", `{"containers":[` + container("c", `{"requests":{"cpu":true}}`) + `]}`, 400,
			"spec.containers[0].resources.requests[cpu]: a quantity must be a string or a number"},
		{"negative", `{"containers":[` + container("c", `{"requests":{"cpu":"-1"}}`) + `]}`, 422,
			`spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`},
		{"request above limit", `{"containers":[` + container("c", `{"requests":{"cpu":"2"},"limits":{"cpu":"1"}}`) + `]}`, 422,
			`spec.containers[0].resources.requests[cpu]: Invalid value: "2": must be less than or equal to cpu limit of 1`},
		{"containers not a list", `{"containers":{"c":1}}`, 400, "spec.containers: must be a list of containers"},
		{"container not an object", `{"containers":[1]}`, 400, "spec.containers[0]: must be an object"},
		{"resources not an object", `{"containers":[` + container("c", `[]`) + `]}`, 400, "spec.containers[0].resources: must be an object"},
		{"spec not an object", `"x"`, 400, "spec: must be an object"},
	}
	h := simkit.Start(t, sim.Options{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := do(t, h, "POST", "/api/v1/namespaces/demo/pods", "", podJSON("bad", tc.spec, ""))
			require.Equal(t, tc.code, code, "%s", body)
			st := decodeMap(t, body)
			require.Equal(t, "Status", st["kind"])
			require.Contains(t, st["message"], tc.msg)
			_, err := h.Server.Create("pods", podJSON("bad", tc.spec, ""))
			var se *sim.StatusError
			require.True(t, errors.As(err, &se), "in-process Create: %v", err)
			require.Equal(t, tc.code, se.Code())
		})
	}
	_, err := h.Server.Get("pods", "demo", "bad")
	require.Error(t, err, "nothing was stored")
}

func TestPodCreatedOverHTTPMatchesPhaseSelector(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	for _, name := range []string{"a", "b"} {
		code, body := do(t, h, "POST", "/api/v1/namespaces/demo/pods", "",
			podJSON(name, `{"containers":[`+container("c", `{}`)+`]}`, `{}`))
		require.Equal(t, 201, code, "%s", body)
	}
	list := getMap(t, h, "/api/v1/namespaces/demo/pods?fieldSelector=status.phase%3DPending")
	require.Len(t, items(t, list), 2)
	list = getMap(t, h, "/api/v1/namespaces/demo/pods?fieldSelector=status.phase%21%3DPending")
	require.Empty(t, items(t, list))
}

func TestCreateInitialStatusPerKind(t *testing.T) {
	tests := []struct {
		path, body string
		want       any
	}{
		{"/api/v1/namespaces", `{"metadata":{"name":"fresh"},"status":{"phase":"Terminating"}}`, map[string]any{"phase": "Active"}},
		{"/api/v1/namespaces/demo/services", `{"metadata":{"name":"s"},"status":{"x":1}}`, map[string]any{"loadBalancer": map[string]any{}}},
		{"/apis/apps/v1/namespaces/demo/deployments", `{"metadata":{"name":"d"},"status":{"replicas":3}}`, map[string]any{}},
		{"/apis/apps/v1/namespaces/demo/replicasets", `{"metadata":{"name":"r"},"status":{"replicas":3}}`, map[string]any{"replicas": float64(0)}},
		{"/api/v1/nodes", `{"metadata":{"name":"n"},"status":{"phase":"Running"}}`, map[string]any{"phase": "Running"}},
	}
	h := simkit.Start(t, sim.Options{})
	for _, tc := range tests {
		t.Run(strings.TrimPrefix(tc.path, "/"), func(t *testing.T) {
			code, body := do(t, h, "POST", tc.path, "", []byte(tc.body))
			require.Equal(t, 201, code, "%s", body)
			require.Equal(t, tc.want, decodeMap(t, body)["status"])
		})
	}
	ns := getMap(t, h, "/api/v1/namespaces/fresh")
	require.Equal(t, []any{"kubernetes"}, ns["spec"].(map[string]any)["finalizers"])
}

// TestPodCreateSpecDefaultsMatchCapture: a pod sent with only what kubectl run
// sends reads back with the spec the real server stored for it (less the service
// account volume, which needs the ServiceAccount admission plugin).
func TestPodCreateSpecDefaultsMatchCapture(t *testing.T) {
	var real map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(capture(t, "watch-streaming-list.jsonl"))), "\n") {
		ev := decodeMap(t, []byte(line))
		if obj := ev["object"].(map[string]any); nameOf(obj) == "worker-1" {
			real = obj
		}
	}
	require.NotNil(t, real, "worker-1 in the capture")
	want := real["spec"].(map[string]any)
	for _, k := range []string{"volumes", "serviceAccountName", "serviceAccount"} {
		delete(want, k)
	}
	delete(want["containers"].([]any)[0].(map[string]any), "volumeMounts")

	h := simkit.Start(t, sim.Options{})
	code, body := do(t, h, "POST", "/api/v1/namespaces/demo/pods", "", podJSON("worker-1",
		`{"containers":[{"name":"worker-1","image":"registry.local/worker:v1"}],"restartPolicy":"Never"}`, `{}`))
	require.Equal(t, 201, code, "%s", body)
	got := decodeMap(t, body)
	require.Equal(t, want, got["spec"])
	require.Equal(t, real["status"], got["status"])

	list := getMap(t, h, "/api/v1/namespaces/demo/pods?fieldSelector=spec.schedulerName%3Ddefault-scheduler,spec.restartPolicy%3DNever")
	require.Len(t, items(t, list), 1)
}

func TestPodCreateContainerDefaults(t *testing.T) {
	tests := []struct {
		image, want string
	}{
		{"registry.local/app", "Always"}, {"registry.local/app:latest", "Always"}, {"app:1.2", "IfNotPresent"},
		{"registry.local:5000/app", "Always"}, {"registry.local:5000/app:v1", "IfNotPresent"},
		{"app@sha256:0123", "IfNotPresent"},
	}
	h := simkit.Start(t, sim.Options{})
	for i, tc := range tests {
		t.Run(tc.image, func(t *testing.T) {
			obj, err := h.Server.Create("pods", podJSON("c"+strconvU(uint64(i)), `{"containers":[{"name":"c","image":"`+tc.image+
				`","ports":[{"containerPort":80}],"env":[{"name":"IP","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}}]}],`+
				`"tolerations":[{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":10}]}`, ""))
			require.NoError(t, err)
			spec := decodeMap(t, obj.JSON)["spec"].(map[string]any)
			c := spec["containers"].([]any)[0].(map[string]any)
			require.Equal(t, tc.want, c["imagePullPolicy"])
			require.Equal(t, "TCP", c["ports"].([]any)[0].(map[string]any)["protocol"])
			require.Equal(t, "v1", c["env"].([]any)[0].(map[string]any)["valueFrom"].(map[string]any)["fieldRef"].(map[string]any)["apiVersion"])
			tols := spec["tolerations"].([]any)
			require.Len(t, tols, 2, "the pod's own unreachable toleration stays, not-ready is added: %v", tols)
			require.EqualValues(t, 10, tols[0].(map[string]any)["tolerationSeconds"])
		})
	}
}
