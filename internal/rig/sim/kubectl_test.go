package sim_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// kubectl runs the real kubectl against a harness.
type kubectl struct {
	bin, kubeconfig, cache string
}

// newKubectl finds kubectl on PATH. Without one the test skips, except
// when the environment variable CI is set (to anything): there a skipped
// real-client test would pass unnoticed, so it fails.
func newKubectl(t *testing.T, h *simkit.Harness) *kubectl {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		const how = "make kubectl builds the pinned one (.ci/kubectl); make unit builds it and puts it first on PATH"
		if _, ci := os.LookupEnv("CI"); ci {
			t.Fatalf("kubectl not found on PATH (%v), and CI is set, so the real-client test must run: %s", err, how)
		}
		t.Skipf("kubectl not found on PATH (%v): skipping the real-client test (%s)", err, how)
	}
	return &kubectl{bin: bin, kubeconfig: h.Kubeconfig(t), cache: t.TempDir()}
}

func (k *kubectl) cmd(ctx context.Context, args ...string) *exec.Cmd {
	all := append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", k.cache, "--request-timeout=60s"}, args...)
	cmd := exec.CommandContext(ctx, k.bin, all...)
	cmd.Env = append(os.Environ(), "HOME="+k.cache, "KUBECONFIG="+k.kubeconfig)
	return cmd
}

func (k *kubectl) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()
	out, err := k.cmd(ctx, args...).CombinedOutput()
	require.NoError(t, err, "kubectl %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// TestKubectl drives the real kubectl over TLS (HTTP/2) with a bearer token.
func TestKubectl(t *testing.T) {
	h := simkit.Start(t, sim.Options{TLS: true, BearerToken: "sim-token"})
	k := newKubectl(t, h)
	for ns := range 3 {
		seedPods(t, h, fmt.Sprintf("team-%d", ns), 25)
	}

	t.Run("get pods -A", func(t *testing.T) {
		out := k.run(t, "get", "pods", "-A")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(t, lines, 76, "header plus 75 pods:\n%s", out)
		require.Regexp(t, `^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$`, lines[0])
		require.Regexp(t, `^team-0\s+worker-1\s+0/2\s+Pending\s+0\s+\S+$`, lines[1])
	})

	t.Run("get pods -A --chunk-size=50", func(t *testing.T) {
		before := h.Server.Stats().ByResource["pods"].List
		out := k.run(t, "get", "pods", "-A", "--chunk-size=50", "-o", "name")
		require.Len(t, strings.Split(strings.TrimSpace(out), "\n"), 75)
		got := h.Server.Stats().ByResource["pods"].List - before
		require.EqualValues(t, 2, got, "75 pods in chunks of 50 take two list requests")
	})

	t.Run("watch events", func(t *testing.T) { kubectlWatch(t, h, k) })

	t.Run("create -f and delete", func(t *testing.T) {
		manifest := filepath.Join(t.TempDir(), "pod.yaml")
		require.NoError(t, os.WriteFile(manifest, capture(t, "pod-web.yaml"), 0o600))
		out := k.run(t, "create", "-f", manifest)
		require.Contains(t, out, "pod/web-7d4b9c created")
		obj, err := h.Server.Get("pods", "demo", "web-7d4b9c")
		require.NoError(t, err)
		require.Contains(t, string(obj.JSON), `"tier":"frontend"`)

		out = k.run(t, "delete", "pod", "web-7d4b9c", "-n", "demo")
		require.Contains(t, out, `pod "web-7d4b9c" deleted`)
		_, err = h.Server.Get("pods", "demo", "web-7d4b9c")
		require.Error(t, err, "the pod is gone")
	})

	t.Run("create in protobuf", func(t *testing.T) { kubectlCreateProtobuf(t, k) })

	t.Run("writes", func(t *testing.T) { kubectlWrites(t, h, k) })

	t.Run("other kinds", func(t *testing.T) {
		_, err := h.Server.Create("deployments.apps", []byte(`{"metadata":{"name":"web","namespace":"team-0"},"spec":{"replicas":2}}`))
		require.NoError(t, err)
		_, err = h.Server.Create("nodes", []byte(`{"metadata":{"name":"node-1"}}`))
		require.NoError(t, err)
		out := k.run(t, "get", "deploy,nodes,configmaps", "-A")
		require.Contains(t, out, "deployment.apps/web")
		require.Contains(t, out, "node/node-1")
		out = k.run(t, "label", "pod", "worker-3", "-n", "team-1", "stage=canary")
		require.Contains(t, out, "labeled")
		out = k.run(t, "get", "pods", "-n", "team-1", "-l", "stage=canary", "-o", "name")
		require.Equal(t, "pod/worker-3", strings.TrimSpace(out))
	})
}

// kubectlWatch runs kubectl get pods -w in the background and sees a pod created
// and deleted through the in-process API.
func kubectlWatch(t *testing.T, h *simkit.Harness, k *kubectl) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()
	cmd := k.cmd(ctx, "get", "pods", "-n", "team-2", "-w", "--output-watch-events", "-o", "json")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer func() {
		cancel()
		_ = cmd.Wait()
	}()
	dec := json.NewDecoder(stdout)
	next := func() wevent {
		var ev wevent
		require.NoError(t, dec.Decode(&ev), "reading kubectl output (stderr: %s)", stderr.String())
		return ev
	}
	// The initial list arrives as ADDED events; the watch is open after the last.
	for range 25 {
		require.Equal(t, "ADDED", next().Type)
	}
	require.Eventually(t, func() bool { return h.Server.Stats().ActiveWatches > 0 }, wait, pollEvery,
		"kubectl opens its watch")
	putPod(t, h, sim.Pod{Namespace: "team-2", Name: "watch-me"})
	_, err = h.Server.Delete("pods", "team-2", "watch-me")
	require.NoError(t, err)
	var seen []string
	for {
		ev := next()
		if ev.name() != "watch-me" {
			continue
		}
		seen = append(seen, ev.Type)
		if ev.Type == "DELETED" {
			break
		}
	}
	require.Equal(t, []string{"ADDED", "DELETED"}, seen)
}
