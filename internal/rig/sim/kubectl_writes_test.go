package sim_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// fail runs kubectl expecting it to fail and returns its output.
func (k *kubectl) fail(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()
	out, err := k.cmd(ctx, args...).CombinedOutput()
	require.Error(t, err, "kubectl %s should fail:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// kubectlWrites drives kubectl's writes: server-side apply (a conflict, then
// forced), patch of each type, scale and delete, and checks what the simulator
// stored as the real server would store it.
func kubectlWrites(t *testing.T, h *simkit.Harness, k *kubectl) {
	dir := t.TempDir()
	manifest := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	get := func(resource, ns, name string) map[string]any {
		t.Helper()
		o, err := h.Server.Get(resource, ns, name)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(o.JSON, &m))
		return m
	}
	managers := func(m map[string]any) map[string]string {
		out := map[string]string{}
		for _, e := range m["metadata"].(map[string]any)["managedFields"].([]any) {
			em := e.(map[string]any)
			out[em["manager"].(string)] = em["operation"].(string)
		}
		return out
	}

	cm := manifest("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: team-0\ndata:\n  a: \"1\"\n")
	out := k.run(t, "apply", "--server-side", "-f", cm)
	require.Contains(t, out, "configmap/settings serverside-applied")
	got := get("configmaps", "team-0", "settings")
	require.Equal(t, map[string]any{"a": "1"}, got["data"])
	require.Equal(t, map[string]string{"kubectl": "Apply"}, managers(got))

	other := manifest("cm2.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: team-0\ndata:\n  a: \"2\"\n")
	out = k.fail(t, "apply", "--server-side", "--field-manager=other", "-f", other)
	require.Contains(t, out, `conflict with "kubectl": .data.a`)
	out = k.run(t, "apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", other)
	require.Contains(t, out, "serverside-applied")
	got = get("configmaps", "team-0", "settings")
	require.Equal(t, map[string]any{"a": "2"}, got["data"])
	require.Equal(t, map[string]string{"other": "Apply"}, managers(got), "kubectl owned only data.a, which other took")

	out = k.run(t, "patch", "configmap", "settings", "-n", "team-0", "--type=merge", "-p", `{"data":{"b":"2"}}`)
	require.Contains(t, out, "configmap/settings patched")
	out = k.run(t, "patch", "configmap", "settings", "-n", "team-0", "--type=json", "-p", `[{"op":"add","path":"/data/c","value":"3"},{"op":"remove","path":"/data/b"}]`)
	require.Contains(t, out, "configmap/settings patched")
	got = get("configmaps", "team-0", "settings")
	require.Equal(t, map[string]any{"a": "2", "c": "3"}, got["data"])
	require.Equal(t, "Update", managers(got)["kubectl-patch"])
	out = k.fail(t, "patch", "configmap", "settings", "-n", "team-0", "--type=json", "-p", `[{"op":"test","path":"/data/c","value":"x"}]`)
	require.Contains(t, out, "the server rejected our request due to an error in our request")

	_, err := h.Server.Create("deployments.apps", []byte(`{"metadata":{"name":"api","namespace":"team-0"},"spec":{"replicas":1,
		"selector":{"matchLabels":{"app":"api"}},"template":{"metadata":{"labels":{"app":"api"}},
		"spec":{"containers":[{"name":"app","image":"app:1"},{"name":"proxy","image":"proxy:1"}]}}}}`))
	require.NoError(t, err)
	out = k.run(t, "patch", "deployment", "api", "-n", "team-0", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"proxy","image":"proxy:2"}]}}}}`)
	require.Contains(t, out, "deployment.apps/api patched")
	out = k.run(t, "get", "deployment", "api", "-n", "team-0", "-o", `jsonpath={range .spec.template.spec.containers[*]}{.name}={.image} {end}`)
	require.Equal(t, "app=app:1 proxy=proxy:2", strings.TrimSpace(out), "the strategic merge patch (kubectl's default) merged by name")

	out = k.run(t, "scale", "deployment", "api", "-n", "team-0", "--replicas=3")
	require.Contains(t, out, "deployment.apps/api scaled")
	got = get("deployments.apps", "team-0", "api")
	require.EqualValues(t, 3, got["spec"].(map[string]any)["replicas"])
	out = k.run(t, "get", "--raw", "/apis/apps/v1/namespaces/team-0/deployments/api/scale")
	require.Contains(t, out, `"spec":{"replicas":3}`)

	out = k.run(t, "delete", "configmap", "settings", "-n", "team-0")
	require.Contains(t, out, `configmap "settings" deleted`)
	_, err = h.Server.Get("configmaps", "team-0", "settings")
	require.Error(t, err)
	out = k.run(t, "delete", "deployment", "api", "-n", "team-0", "--cascade=foreground", "--dry-run=server")
	require.Contains(t, out, `deployment.apps "api" deleted`)
	require.Contains(t, out, "(server dry run)")
	_, err = h.Server.Get("deployments.apps", "team-0", "api")
	require.NoError(t, err, "a server dry run keeps it")
}
