package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/internal/rig/testutil"
)

// emptyKinds are the kinds the simulator serves, each with an object to
// create in a namespace (NS) that has none, and a custom resource with
// printer columns. nodes are cluster-scoped, and the simulator starts
// with none.
var emptyKinds = []struct{ kind, resource, body string }{
	{"pods", "pods", `{"metadata":{"name":"p1","namespace":"NS"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`},
	{"configmaps", "configmaps", `{"metadata":{"name":"c1","namespace":"NS"},"data":{"a":"1"}}`},
	{"secrets", "secrets", `{"metadata":{"name":"s1","namespace":"NS"},"type":"Opaque","data":{"t":"c2VjcmV0"}}`},
	{"services", "services", `{"metadata":{"name":"svc1","namespace":"NS"},"spec":{"type":"ClusterIP","clusterIP":"10.96.0.20",
		"clusterIPs":["10.96.0.20"],"ports":[{"port":80,"protocol":"TCP"}]}}`},
	{"events", "events", `{"metadata":{"name":"e1.1","namespace":"NS"},"involvedObject":{"kind":"Pod","name":"p1","namespace":"NS"},
		"reason":"Pulled","message":"Pulled","type":"Normal","count":1,"source":{"component":"kubelet"}}`},
	{"leases", "leases.coordination.k8s.io", `{"metadata":{"name":"l1","namespace":"NS"},"spec":{"holderIdentity":"a"}}`},
	{"deployments", "deployments.apps", `{"metadata":{"name":"d1","namespace":"NS"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"d"}},
		"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`},
	{"replicasets", "replicasets.apps", `{"metadata":{"name":"r1","namespace":"NS"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"r"}},
		"template":{"metadata":{"labels":{"app":"r"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`},
	{"statefulsets", "statefulsets.apps", `{"metadata":{"name":"st1","namespace":"NS"},"spec":{"replicas":1,"serviceName":"st",
		"selector":{"matchLabels":{"app":"s"}},"template":{"metadata":{"labels":{"app":"s"}},"spec":{"containers":[{"name":"pg","image":"postgres"}]}}}}`},
	{"widgets", "widgets.example.com", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"NS"},"spec":{"size":3,"color":"blue"}}`},
	{"nodes", "nodes", `{"metadata":{"name":"node-9"},"status":{"conditions":[{"type":"Ready","status":"True"}]}}`},
}

// emptyCluster serves every kind with no object. While an object it is
// told to create is being made and watched, until the caller's done, the
// server's clock stands three days back, so the object's creationTimestamp
// and the AGE the server prints in both commands' watch rows are of one
// clock whenever the row is rendered ("0s"; a row rendered once the clock
// is back would say "3d", and which one a watcher gets depended on timing).
func emptyCluster(t *testing.T) (*simkit.Harness, string, func(resource, body string) (done func())) {
	t.Helper()
	var creating atomic.Bool
	created := time.Now().Add(-72 * time.Hour).Truncate(time.Second)
	h := simkit.Start(t, sim.Options{
		Clock: func() time.Time {
			if creating.Load() {
				return created
			}
			return time.Now()
		},
		Resources: []sim.ResourceInfo{{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget",
			Namespaced: true, PrinterColumns: []sim.PrinterColumn{
				{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
				{Name: "Color", Type: "string", JSONPath: ".spec.color"},
				{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
			}}},
	})
	create := func(resource, body string) func() {
		t.Helper()
		creating.Store(true)
		_, err := h.Server.Create(resource, []byte(body))
		require.NoError(t, err, "create %s", resource)
		return func() { creating.Store(false) }
	}
	return h, h.Kubeconfig(t), create
}

// TestGoldenKubectlEmptyStartWatch: a watch that starts with no object
// prints, once the first object comes, the header and row kubectl prints
// (the server's columns, never columns named by position), for every kind
// the simulator serves, plain, with --output-watch-events and with
// --watch-only.
func TestGoldenKubectlEmptyStartWatch(t *testing.T) {
	bin := goldenKubectl(t)
	h, kc, create := emptyCluster(t)
	variants := [][]string{{"-w"}, {"-w", "--output-watch-events"}, {"--watch-only"}}
	n := 0
	for _, k := range emptyKinds {
		for _, v := range variants {
			n++
			ns := "empty-" + strings.TrimSuffix(k.kind, "s") + "-" + string(rune('a'+n%26)) + strings.Repeat("x", n/26)
			args := append([]string{k.kind}, v...)
			if k.kind != "nodes" {
				args = append(args, "-n", ns)
			}
			t.Run(strings.Join(append([]string{k.kind}, v...), " "), func(t *testing.T) {
				eventually(t, "the last case's watches closed", func() bool { return h.Server.Stats().ActiveWatches == 0 })
				kubectlCmd := exec.Command(bin, append([]string{"--kubeconfig", kc, "--cache-dir", t.TempDir(), "get"}, args...)...)
				kubectlCmd.Env = testEnv(t)
				kout, err := kubectlCmd.StdoutPipe()
				require.NoError(t, err)
				require.NoError(t, kubectlCmd.Start())
				t.Cleanup(func() { _ = kubectlCmd.Process.Kill(); _ = kubectlCmd.Wait() })
				addr := freeAddr(t)
				p := start(t, testEnv(t), append(append([]string{"get"}, args...), "--kubeconfig", kc, "--metrics-addr", addr)...)
				klines, wlines := readLines(t, kout), readLines(t, p.stdout)
				eventually(t, "kwatch synced", func() bool { return ready("http://" + addr + "/readyz") })
				eventually(t, "both watches open", func() bool { return h.Server.Stats().ActiveWatches >= 2 })
				body := strings.ReplaceAll(k.body, "NS", ns)
				if k.kind == "nodes" {
					body = strings.ReplaceAll(body, "node-9", "node-"+ns)
				}
				done := create(k.resource, body)
				want, got := take(klines, 2), take(wlines, 2)
				done()
				require.Equal(t, want, got, "kwatch (actual) against kubectl (expected):\n%s\n---\n%s",
					strings.Join(want, "\n"), strings.Join(got, "\n"))
				// The node is cluster-scoped: the next case must start empty too.
				if k.kind == "nodes" {
					_, err := h.Server.Delete("nodes", "", "node-"+ns)
					require.NoError(t, err)
				}
			})
		}
	}
}

// TestGoldenKubectlWatchEvents compares kubectl get -w -o json|yaml with
// kwatch's byte for byte, with and without --output-watch-events: kubectl
// prints a watch event on one line of JSON, or as a YAML document, with
// managedFields kept; objects alone indented and without them.
func TestGoldenKubectlWatchEvents(t *testing.T) {
	bin := goldenKubectl(t)
	h, kc := goldenCluster(t)
	_, err := h.Server.Patch("pods", "demo", "web-1", []byte(`{"metadata":{"annotations":{"note":"<b>&"}}}`))
	require.NoError(t, err)
	// A client's write, so that web-1 has managedFields (the in-process
	// writes record none): the watch events must keep them, as kubectl's do.
	labelled := runKubectl(t, bin, kc, "label", "pods", "web-1", "-n", "demo", "golden=labelled")
	require.Zero(t, labelled.code, "kubectl label: %s", labelled.stderr)
	restarts := int32(10)
	// Each case reads until as many lines matching end as there are
	// objects: the last line of each one's document. managed says whether
	// the output shows managedFields (kubectl keeps them in watch events
	// only).
	cases := []struct {
		args    []string
		end     string
		managed bool
	}{
		{[]string{"pods", "-n", "demo", "-w", "-o", "json", "--output-watch-events"}, `^\{"type":`, true},
		{[]string{"pods", "-n", "demo", "-w", "-o", "yaml", "--output-watch-events"}, `^type: `, true},
		{[]string{"pods", "-n", "demo", "-w", "-o", "json"}, `^\}$`, false},
		{[]string{"pods", "-n", "demo", "-w", "-o", "yaml"}, `^status:$`, false},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			eventually(t, "the last case's watches closed", func() bool { return h.Server.Stats().ActiveWatches == 0 })
			kubectlCmd := exec.Command(bin, append([]string{"--kubeconfig", kc, "--cache-dir", t.TempDir(), "get"}, tc.args...)...)
			kubectlCmd.Env = testEnv(t)
			kout, err := kubectlCmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, kubectlCmd.Start())
			t.Cleanup(func() { _ = kubectlCmd.Process.Kill(); _ = kubectlCmd.Wait() })
			addr := freeAddr(t)
			p := start(t, testEnv(t), append(append([]string{"get"}, tc.args...), "--kubeconfig", kc, "--metrics-addr", addr)...)
			klines, wlines := readLines(t, kout), readLines(t, p.stdout)
			end := regexp.MustCompile(tc.end)
			docs := func(lr *lineReader, n int) []string {
				var got []string
				for range n {
					got = append(got, lr.until(end.MatchString)...)
				}
				return got
			}
			want, got := docs(klines, 4), docs(wlines, 4)
			eventually(t, "kwatch synced", func() bool { return ready("http://" + addr + "/readyz") })
			eventually(t, "both watches open", func() bool { return h.Server.Stats().ActiveWatches >= 2 })
			restarts++
			_, err = h.Server.PutPod(sim.Pod{Namespace: "demo", Name: "web-2", NodeName: "node-1", Ready: true, Restarts: restarts,
				Labels: map[string]string{"app": "web"}})
			require.NoError(t, err)
			want, got = append(want, docs(klines, 1)...), append(got, docs(wlines, 1)...)
			require.Equal(t, strings.Join(want, "\n"), strings.Join(got, "\n"), "kwatch (actual) against kubectl (expected)")
			require.Equal(t, tc.managed, strings.Contains(strings.Join(want, "\n"), "managedFields"),
				"kubectl shows managedFields in watch events only (the test's premise)")
		})
	}
}

// TestDropManagedFieldsInWatchEvents: --drop-managed-fields prints
// kubectl's watch events with metadata.managedFields left out and nothing
// else changed.
func TestDropManagedFieldsInWatchEvents(t *testing.T) {
	bin := goldenKubectl(t)
	_, kc := goldenCluster(t)
	labelled := runKubectl(t, bin, kc, "label", "pods", "web-1", "-n", "demo", "golden=labelled")
	require.Zero(t, labelled.code, "kubectl label: %s", labelled.stderr)
	args := []string{"pods", "-n", "demo", "-w", "-o", "json", "--output-watch-events"}
	kubectlCmd := exec.Command(bin, append([]string{"--kubeconfig", kc, "--cache-dir", t.TempDir(), "get"}, args...)...)
	kubectlCmd.Env = testEnv(t)
	kout, err := kubectlCmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, kubectlCmd.Start())
	t.Cleanup(func() { _ = kubectlCmd.Process.Kill(); _ = kubectlCmd.Wait() })
	p := start(t, testEnv(t), append(append([]string{"get"}, args...), "--drop-managed-fields", "--kubeconfig", kc)...)
	want, got := take(readLines(t, kout), 4), take(readLines(t, p.stdout), 4)
	require.Contains(t, strings.Join(want, "\n"), "managedFields", "web-1 has managedFields")
	for i := range want {
		var k, w map[string]any
		require.NoError(t, json.Unmarshal([]byte(want[i]), &k), "kubectl's line %d", i)
		require.NoError(t, json.Unmarshal([]byte(got[i]), &w), "kwatch's line %d", i)
		delete(k["object"].(map[string]any)["metadata"].(map[string]any), "managedFields")
		require.Equal(t, k, w, "event %d: kubectl's without managedFields", i)
		require.NotContains(t, got[i], "managedFields")
	}
}

// TestGoldenKubectlErrors: where kubectl has the words for an error, kwatch
// prints them as kubectl does, with kubectl's "error: " prefix. (kwatch
// refuses a bad command line with status 2, kubectl with 1: only the line
// is compared there.)
func TestGoldenKubectlErrors(t *testing.T) {
	bin := goldenKubectl(t)
	_, kc := goldenCluster(t)
	cases := []struct {
		args     []string
		sameCode bool
	}{
		{[]string{"nosuchtype"}, true},
		{[]string{"pods,nosuchtype", "-n", "demo"}, true},
		{[]string{"pods,namespaces", "-w"}, false},
		{[]string{"pods/", "-n", "demo"}, false},
		// The formats kwatch has differ: the words up to their list are kubectl's.
		{[]string{"pods", "-o", "bogus"}, false},
		// Names beside selectors, in the two forms kubectl words apart.
		{[]string{"pods", "web-1", "-n", "demo", "-l", "app"}, false},
		{[]string{"pod/web-1", "-n", "demo", "--field-selector", "spec.nodeName=node-2"}, false},
		{[]string{"pods,services", "web-1", "-n", "demo", "-l", "app", "-o", "bogus"}, false},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			want := runKubectl(t, bin, kc, append([]string{"get"}, tc.args...)...)
			kw := append([]string{"get"}, tc.args...)
			if !slices.Contains(tc.args, "-w") {
				kw = append(kw, "--watch=false") // kubectl get's default
			}
			got := kwatch(t, testEnv(t), append(kw, "--kubeconfig", kc)...)
			require.NotZero(t, want.code, "kubectl failed")
			require.NotZero(t, got.code, "kwatch failed")
			if tc.sameCode {
				require.Equal(t, want.code, got.code, "exit status")
			}
			require.Equal(t, want.stdout, got.stdout, "stdout")
			cut := func(s string) string { s, _, _ = strings.Cut(s, ", allowed formats are: "); return s }
			require.Equal(t, cut(want.stderr), cut(got.stderr), "stderr: kwatch (actual) against kubectl (expected)")
		})
	}
}

// TestGoldenKubectlCompletion compares the completions kubectl and kwatch
// give their shells ("__complete"), byte for byte: resource types as
// kubectl names them, only those starting with the word, after a comma
// too, object names and namespaces by prefix.
func TestGoldenKubectlCompletion(t *testing.T) {
	bin := goldenKubectl(t)
	_, kc := goldenCluster(t)
	cases := [][]string{
		{"get", ""},
		{"get", "de"},
		{"get", "p"},
		{"get", "pods,de"},
		{"get", "nosuch"},
		{"get", "pods", "-n", "demo", ""},
		{"get", "pods", "-n", "demo", "web-1"},
		{"get", "pods", "-n", "demo", "w"},
		{"get", "pods", "-n", ""},
		{"get", "pods", "-n", "d"},
		{"get", "pods", "--namespace", "o"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			// The global flags go after __complete, as a shell passes them.
			want := runKubectlArgs(t, bin, append([]string{"__complete", "--kubeconfig", kc, "--cache-dir", t.TempDir()}, args...)...)
			got := kwatch(t, testEnv(t), append([]string{"__complete", "--kubeconfig", kc}, args...)...)
			require.Equal(t, want.code, got.code, "exit status; kubectl stderr: %s", want.stderr)
			require.Equal(t, want.stdout, got.stdout, "kwatch (actual) against kubectl (expected)")
		})
	}
}

// runKubectlArgs runs kubectl with exactly args.
func runKubectlArgs(t *testing.T, bin string, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = testEnv(t)
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

// TestGoldenKubectlClosedPipe: when the reader goes away ("kwatch pods |
// head -1"), kwatch ends at its next write as kubectl does: quietly, nothing
// on stderr, killed by SIGPIPE like any command in a pipeline whose reader
// left (the shell shows nothing for it).
func TestGoldenKubectlClosedPipe(t *testing.T) {
	bin := goldenKubectl(t)
	h, kc := goldenCluster(t)
	end := func(name string, cmd *exec.Cmd) (string, string) {
		t.Helper()
		r, w, err := os.Pipe()
		require.NoError(t, err)
		cmd.Stdout = w
		var errb testutil.Buffer
		cmd.Stderr = &errb
		require.NoError(t, cmd.Start())
		w.Close()
		first, err := bufio.NewReader(r).ReadString('\n')
		require.NoError(t, err, "%s printed a line", name)
		require.NoError(t, r.Close()) // head -1 leaves
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		restarts := int32(20)
		deadline := time.After(wait)
		for {
			restarts++ // a change, so that there is something to write
			_, err := h.Server.PutPod(sim.Pod{Namespace: "demo", Name: "web-2", NodeName: "node-1", Ready: true, Restarts: restarts,
				Labels: map[string]string{"app": "web"}})
			require.NoError(t, err)
			select {
			case err := <-done:
				return first, fmt.Sprintf("%v; stderr %q", err, errb.String())
			case <-time.After(100 * time.Millisecond): // how often to change, not a timing assumption
			case <-deadline:
				t.Fatalf("%s did not end after its reader left", name)
			}
		}
	}
	kubectlCmd := exec.Command(bin, "--kubeconfig", kc, "--cache-dir", t.TempDir(), "get", "pods", "-n", "demo", "-w")
	kubectlCmd.Env = testEnv(t)
	kwatchCmd := exec.Command(binary, "get", "pods", "-n", "demo", "-w", "--kubeconfig", kc)
	kwatchCmd.Env = testEnv(t)
	wantFirst, want := end("kubectl", kubectlCmd)
	gotFirst, got := end("kwatch", kwatchCmd)
	require.Equal(t, wantFirst, gotFirst)
	require.Equal(t, `signal: broken pipe; stderr ""`, want, "kubectl's end")
	require.Equal(t, want, got, "kwatch ends as kubectl does")
}
