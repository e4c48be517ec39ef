package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// goldenKubectl finds kubectl on PATH (make unit puts the pinned v1.37.2
// first) and checks that it is the version .ci/kubectl pins: the golden
// tests compare bytes with that one, and an older kubectl (a machine's
// own) prints other bytes. Without it the golden tests skip, except when
// CI is set: there a skipped comparison would pass unnoticed, so it fails.
func goldenKubectl(t *testing.T) string {
	t.Helper()
	const how = "make kubectl builds the pinned one (.ci/kubectl); make unit builds it and puts it first on PATH"
	skip := func(format string, args ...any) {
		t.Helper()
		if _, ci := os.LookupEnv("CI"); ci {
			t.Fatalf(format+", and CI is set, so the golden tests must run: "+how, args...)
		}
		t.Skipf(format+": skipping the golden tests ("+how+")", args...)
	}
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		skip("kubectl not found on PATH (%v)", err)
	}
	pinned := pinnedKubectlVersion(t)
	out, err := exec.Command(bin, "version", "--client=true", "--output=json").Output()
	if err != nil {
		skip("%s version: %v", bin, err)
	}
	var v struct {
		ClientVersion struct {
			GitVersion string `json:"gitVersion"`
		} `json:"clientVersion"`
	}
	if err := json.Unmarshal(out, &v); err != nil || v.ClientVersion.GitVersion != pinned {
		skip("%s is kubectl %q (%v), not the pinned %s", bin, v.ClientVersion.GitVersion, err, pinned)
	}
	return bin
}

// pinnedKubectlVersion is the k8s.io/kubernetes version .ci/kubectl's
// go.mod requires: the kubectl the golden tests compare with.
func pinnedKubectlVersion(t *testing.T) string {
	t.Helper()
	mod, err := os.ReadFile(filepath.Join("..", "..", ".ci", "kubectl", "go.mod"))
	require.NoError(t, err)
	for line := range strings.Lines(string(mod)) {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) == 2 && f[0] == "k8s.io/kubernetes" {
			return f[1]
		}
	}
	t.Fatalf(".ci/kubectl/go.mod requires no k8s.io/kubernetes")
	return ""
}

// goldenCluster serves pods whose ages stay put for the test: created
// three days ago to the second, they print as "3d" for an hour, to
// kubectl and kwatch alike.
func goldenCluster(t *testing.T) (*simkit.Harness, string) {
	t.Helper()
	var loading atomic.Bool
	loading.Store(true)
	created := time.Now().Add(-72 * time.Hour).Truncate(time.Second)
	h := simkit.Start(t, sim.Options{Clock: func() time.Time {
		if loading.Load() {
			return created
		}
		return time.Now()
	}})
	for _, p := range []sim.Pod{
		{Namespace: "demo", Name: "web-1", NodeName: "node-2", Ready: true, Labels: map[string]string{"app": "web", "tier": "front"}},
		{Namespace: "demo", Name: "web-2", NodeName: "node-1", Ready: true, Restarts: 3, Labels: map[string]string{"app": "web"}},
		{Namespace: "demo", Name: "web-10", NodeName: "node-3", Ready: true, Restarts: 1, Labels: map[string]string{"app": "web", "tier": "back"}},
		{Namespace: "demo", Name: "db-0", Labels: map[string]string{"app": "db", "app.kubernetes.io/name": "postgres"}},
		{Namespace: "other", Name: "elsewhere", NodeName: "node-1", Ready: true},
	} {
		_, err := h.Server.PutPod(p)
		require.NoError(t, err)
	}
	loading.Store(false)
	return h, h.Kubeconfig(t)
}

// outcome is what a command printed and how it ended.
type outcome struct {
	stdout, stderr string
	code           int
}

func runKubectl(t *testing.T, bin, kc string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cache := t.TempDir()
	all := append([]string{"--kubeconfig", kc, "--cache-dir", cache}, args...)
	cmd := exec.CommandContext(ctx, bin, all...)
	cmd.Env = testEnv(t, "HOME="+cache)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err, "kubectl %q", args)
	}
	return outcome{stdout: out.String(), stderr: errb.String(), code: code}
}

// TestGoldenKubectl runs kubectl and kwatch with the same arguments
// against the same simulated cluster and compares their stdout byte for
// byte (and, where kubectl fails, the exit status and the error line).
// kwatch lists once with --watch=false, which is kubectl get's default.
func TestGoldenKubectl(t *testing.T) {
	bin := goldenKubectl(t)
	_, kc := goldenCluster(t)
	dir := t.TempDir()
	jpFile := filepath.Join(dir, "names.jsonpath")
	require.NoError(t, os.WriteFile(jpFile, []byte(`{range .items[*]}{.metadata.name}{"\t"}{.status.podIP}{"\n"}{end}`), 0o600))
	ccFile := filepath.Join(dir, "columns.txt")
	require.NoError(t, os.WriteFile(ccFile, []byte("NAME          NODE\n.metadata.name .spec.nodeName\n"), 0o600))

	cases := [][]string{
		// Tables.
		{"pods", "-n", "demo"},
		{"pods", "-A"},
		{"pods", "-n", "demo", "-o", "wide"},
		{"pods", "-n", "demo", "--no-headers"},
		{"pods", "-n", "demo", "-l", "app=web"},
		{"pods", "-n", "demo", "--chunk-size=1"},
		{"pods", "web-2", "-n", "demo"},
		{"pods", "web-2", "web-1", "-n", "demo"},
		{"pod/web-1", "-n", "demo"},
		{"pod/web-10", "pods/db-0", "-n", "demo"},
		{"pods", "-n", "demo", "--sort-by=.spec.nodeName"},
		{"pods", "-n", "demo", "--sort-by", "{.status.containerStatuses[0].restartCount}"},
		{"pods", "-A", "--sort-by=.metadata.name"},
		{"pods", "-n", "demo", "-L", "app,tier"},
		{"pods", "-n", "demo", "--label-columns=app.kubernetes.io/name", "-L", "nope"},
		{"pods", "-n", "demo", "--show-labels"},
		{"pods", "-n", "demo", "--show-kind"},
		{"pods", "-A", "--show-kind", "--show-labels", "-L", "app"},
		{"pods", "-n", "demo", "-o", "wide", "-L", "tier", "--show-labels"},
		{"pods,namespaces", "-n", "demo"},
		{"pods,namespaces", "-n", "demo", "--no-headers"},
		// Names, JSON and YAML.
		{"pods", "-n", "demo", "-o", "name"},
		{"pods,namespaces", "-n", "demo", "-o", "name"},
		{"pods", "web-1", "-n", "demo", "-o", "json"},
		{"pods", "web-1", "-n", "demo", "-o", "yaml"},
		{"pod/web-1", "pod/db-0", "-n", "demo", "-o", "name"},
		{"pods", "-n", "demo", "-o", "name", "--sort-by=.metadata.name"},
		// JSONPath.
		{"pods", "-n", "demo", "-o", "jsonpath={.items[*].metadata.name}"},
		{"pods", "-n", "demo", "-o", `jsonpath={range .items[*]}{.metadata.name}{"\t"}{.spec.nodeName}{"\n"}{end}`},
		{"pods", "-n", "demo", "-o", `jsonpath={.items[?(@.metadata.labels.app=="db")].metadata.name}`},
		{"pods", "-n", "demo", "-o", `jsonpath={.items[?(@.status.containerStatuses[0].restartCount>0)].metadata.name}`},
		{"pods", "-n", "demo", "-o", `jsonpath={.items[0,2].metadata.name}`},
		{"pods", "-n", "demo", "-o", `jsonpath={.items[1:3].metadata.name}`},
		{"pods", "-n", "demo", "-o", `jsonpath={.items[-1:].metadata.name}`},
		{"pods", "-n", "demo", "-o", `jsonpath={.items[0].metadata.labels}`},
		{"pods", "-n", "demo", "-o", `jsonpath={.items[0].spec.containers[*].name}`},
		{"pods", "-n", "demo", "-o", `jsonpath={.items[*].metadata.labels.tier}`},
		{"pods", "-n", "demo", "-o", `jsonpath={.items[*].metadata.labels.app\.kubernetes\.io/name}`},
		{"pods", "-n", "demo", "-o", `jsonpath={.items[*].metadata.labels['app.kubernetes.io/name']}`},
		{"pods", "-n", "demo", "-o", `jsonpath={.items[0].metadata['name','namespace']}`},
		{"pods", "db-0", "-n", "demo", "-o", `jsonpath={..containerPort}`},
		{"pods", "web-1", "-n", "demo", "-o", "jsonpath={.metadata.name} is on {.spec.nodeName}"},
		{"pods", "web-1", "-n", "demo", "-o", `jsonpath={.status.containerStatuses[0].restartCount}{"\n"}`},
		{"pods", "web-1", "-n", "demo", "-o", `jsonpath={.kind}`},
		{"pods", "-n", "demo", "-o", "jsonpath-file=" + jpFile},
		{"pods", "-n", "demo", "-o", "jsonpath={.items[*].metadata.name}", "--sort-by=.spec.nodeName"},
		{"pods", "-n", "demo", "-o", "jsonpath={.items[*].spec.nonexistent}"},
		// Custom columns.
		{"pods", "-n", "demo", "-o", "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,RESTARTS:.status.containerStatuses[*].restartCount"},
		{"pods", "-A", "-o", "custom-columns=NS:.metadata.namespace,NAME:{.metadata.name},TIER:.metadata.labels.tier"},
		{"pods", "-n", "demo", "-o", "custom-columns=NAME:.metadata.name,PORTS:.spec.containers[*].ports[*].containerPort", "--no-headers"},
		{"pods", "-n", "demo", "-o", "custom-columns-file=" + ccFile},
		{"pods", "-n", "demo", "-o", "custom-columns=NAME:.metadata.name", "--sort-by=.spec.nodeName"},
		{"pods,namespaces", "-n", "demo", "-o", "custom-columns=KIND:.kind,NAME:.metadata.name"},
		{"pods,namespaces", "-n", "demo", "-o", "jsonpath={.items[*].metadata.name}"},
		{"pods,namespaces", "-n", "demo", "-o", "json"},
		{"pods,namespaces", "-n", "demo", "-o", "yaml"},
		{"pods,namespaces", "-n", "demo", "-o", "name", "--sort-by=.metadata.name"},
		{"pods,namespaces", "-n", "demo", "-o", "jsonpath={.items[*].metadata.name}", "--sort-by=.metadata.name"},
		{"pods,deployments", "-n", "demo", "-o", "name"},
		// Errors and --ignore-not-found.
		{"pods", "nope", "-n", "demo"},
		{"pods", "web-1", "nope", "-n", "demo", "-o", "name"},
		{"pods", "nope", "-n", "demo", "--ignore-not-found"},
		{"pods", "-l", "app=nope", "-n", "demo"},
		{"pods", "-l", "app=nope", "-n", "demo", "--ignore-not-found"},
		{"pods", "-l", "app=nope", "-A"},
		// Several types, some or all of them empty: kubectl says so once, when all are.
		{"pods,deployments", "-n", "demo"},
		{"deployments,services", "-n", "demo", "-l", "app=nope"},
		{"nodes,pods", "-n", "demo", "-l", "app=nope"},
		// Lists the server refuses, in kubectl's words.
		{"pods", "-n", "demo", "-l", "app in ("},
		{"deployments", "-A", "--field-selector", "spec.nope=x"},
		{"pods", "-n", "demo", "-l", "app=web", "--field-selector", "spec.nope=x"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			want := runKubectl(t, bin, kc, append([]string{"get"}, args...)...)
			got := kwatch(t, testEnv(t), append(append([]string{"get"}, args...), "--watch=false", "--kubeconfig", kc)...)
			require.Equal(t, want.code, got.code, "exit status; kubectl stderr: %s\nkwatch stderr: %s", want.stderr, got.stderr)
			require.Equal(t, want.stdout, got.stdout, "stdout of kwatch (actual) against kubectl's (expected); kwatch stderr: %s", got.stderr)
			require.Equal(t, want.stderr, got.stderr, "stderr: the error line, or kubectl's notice")
		})
	}
}

// TestGoldenKubectlWatch compares kubectl get -w with kwatch's watch byte
// for byte: the initial list, then a change.
func TestGoldenKubectlWatch(t *testing.T) {
	bin := goldenKubectl(t)
	h, kc := goldenCluster(t)
	restarts := int32(4)
	cases := []struct {
		args    []string
		initial int // lines before the change
		after   int // lines after it
	}{
		{[]string{"pods", "-n", "demo", "-w"}, 5, 1},
		{[]string{"pods", "-n", "demo", "-w", "--output-watch-events"}, 5, 1},
		{[]string{"pods", "-n", "demo", "-l", "app=web", "-w", "-o", "name"}, 3, 1},
		{[]string{"pods", "-n", "demo", "--watch-only"}, 0, 2},
		{[]string{"pods", "web-1", "-n", "demo", "-w", "-o", "custom-columns=NAME:.metadata.name,RESTARTS:.status.containerStatuses[0].restartCount"}, 2, 1},
		{[]string{"pods", "-n", "demo", "-l", "tier", "-w", "-o", `jsonpath={.metadata.name} {.status.containerStatuses[0].restartCount}{"\n"}`}, 2, 1},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			kubectlCmd := exec.Command(bin, append([]string{"--kubeconfig", kc, "--cache-dir", t.TempDir(), "get"}, tc.args...)...)
			kubectlCmd.Env = testEnv(t)
			kout, err := kubectlCmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, kubectlCmd.Start())
			t.Cleanup(func() { _ = kubectlCmd.Process.Kill(); _ = kubectlCmd.Wait() })
			addr := freeAddr(t)
			p := start(t, testEnv(t), append(append([]string{"get"}, tc.args...), "--kubeconfig", kc, "--metrics-addr", addr)...)
			klines, wlines := readLines(t, kout), readLines(t, p.stdout)

			want, got := take(klines, tc.initial), take(wlines, tc.initial)
			// The change must come after kwatch's initial list (else it is
			// part of it) and while kubectl watches.
			eventually(t, "kwatch synced", func() bool { return ready("http://" + addr + "/readyz") })
			eventually(t, "both watches open", func() bool { return h.Server.Stats().ActiveWatches >= 2 })
			restarts++
			_, err = h.Server.PutPod(sim.Pod{Namespace: "demo", Name: "web-1", NodeName: "node-2", Ready: true, Restarts: restarts,
				Labels: map[string]string{"app": "web", "tier": "front"}})
			require.NoError(t, err)
			want, got = append(want, take(klines, tc.after)...), append(got, take(wlines, tc.after)...)
			require.Equal(t, want, got, "kwatch (actual) against kubectl (expected):\n%s\n---\n%s",
				strings.Join(want, "\n"), strings.Join(got, "\n"))
		})
	}
}

// take reads n lines.
func take(lr *lineReader, n int) []string {
	var got []string
	for len(got) < n {
		got = append(got, lr.until(func(string) bool { return true })...)
	}
	return got
}

// TestGoldenKubectlWatchNotFound: kubectl fails before it watches when the
// named object does not exist; kwatch too, with the same line.
func TestGoldenKubectlWatchNotFound(t *testing.T) {
	bin := goldenKubectl(t)
	_, kc := goldenCluster(t)
	want := runKubectl(t, bin, kc, "get", "pods", "nope", "-n", "demo", "-w")
	got := kwatch(t, testEnv(t), "get", "pods", "nope", "-n", "demo", "-w", "--kubeconfig", kc)
	require.Equal(t, outcome{stderr: `Error from server (NotFound): pods "nope" not found` + "\n", code: 1}, want)
	require.Equal(t, want, outcome{stdout: got.stdout, stderr: got.stderr, code: got.code})

	// --ignore-not-found: nothing to watch, so both end at once, quietly.
	want = runKubectl(t, bin, kc, "get", "pods", "nope", "-n", "demo", "-w", "--ignore-not-found")
	got = kwatch(t, testEnv(t), "get", "pods", "nope", "-n", "demo", "-w", "--ignore-not-found", "--kubeconfig", kc)
	require.Equal(t, outcome{}, want)
	require.Equal(t, want, outcome{stdout: got.stdout, stderr: got.stderr, code: got.code})
}

// ready reports whether url answers 200; not yet listening is not ready.
func ready(url string) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
