package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// demo serves a simulated cluster with three pods in namespace demo and
// returns it with a kubeconfig for it.
func demo(t *testing.T, opts sim.Options) (*simkit.Harness, string) {
	t.Helper()
	h := simkit.Start(t, opts)
	for _, p := range []sim.Pod{
		{Namespace: "demo", Name: "web-1", NodeName: "node-1", Ready: true, Labels: map[string]string{"app": "web"}},
		{Namespace: "demo", Name: "web-2", NodeName: "node-2", Ready: true, Restarts: 3, Labels: map[string]string{"app": "web"}},
		{Namespace: "demo", Name: "db-0", Labels: map[string]string{"app": "db"}},
		{Namespace: "other", Name: "elsewhere", NodeName: "node-1", Ready: true},
	} {
		_, err := h.Server.PutPod(p)
		require.NoError(t, err)
	}
	return h, h.Kubeconfig(t)
}

// fields splits a table's lines into cells (cells hold no spaces here).
func fields(out string) [][]string {
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		rows = append(rows, strings.Fields(l))
	}
	return rows
}

func TestListTable(t *testing.T) {
	_, kc := demo(t, sim.Options{})
	tests := []struct {
		name string
		args []string
		want [][]string // cells without AGE
	}{
		{"namespace from the kubeconfig flag", []string{"pods", "-n", "demo", "--watch=false", "--kubeconfig", kc},
			[][]string{{"NAME", "READY", "STATUS", "RESTARTS"}, {"db-0", "0/2", "Pending", "0"},
				{"web-1", "2/2", "Running", "0"}, {"web-2", "2/2", "Running", "3"}}},
		{"get, flags first, all namespaces", []string{"--kubeconfig=" + kc, "-A", "get", "po", "-w=false"},
			[][]string{{"NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS"}, {"demo", "db-0", "0/2", "Pending", "0"},
				{"demo", "web-1", "2/2", "Running", "0"}, {"demo", "web-2", "2/2", "Running", "3"},
				{"other", "elsewhere", "2/2", "Running", "0"}}},
		{"label selector", []string{"pods", "-ndemo", "-l", "app=web", "--watch=false", "--kubeconfig", kc},
			[][]string{{"NAME", "READY", "STATUS", "RESTARTS"}, {"web-1", "2/2", "Running", "0"}, {"web-2", "2/2", "Running", "3"}}},
		{"field selector", []string{"pods", "-A", "--field-selector", "spec.nodeName=node-1", "--watch=false", "--kubeconfig", kc},
			[][]string{{"NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS"}, {"demo", "web-1", "2/2", "Running", "0"},
				{"other", "elsewhere", "2/2", "Running", "0"}}},
		{"object by name", []string{"pods", "web-2", "--namespace", "demo", "--watch=false", "--kubeconfig", kc},
			[][]string{{"NAME", "READY", "STATUS", "RESTARTS"}, {"web-2", "2/2", "Running", "3"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := kwatch(t, testEnv(t), tt.args...)
			require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
			rows := fields(r.stdout)
			require.Len(t, rows, len(tt.want), "output:\n%s", r.stdout)
			for i, row := range rows {
				require.Equal(t, "AGE", rows[0][len(rows[0])-1], "last header")
				require.Equal(t, tt.want[i], row[:len(row)-1], "row %d of:\n%s", i, r.stdout)
			}
		})
	}
}

func TestNamespaceFromContext(t *testing.T) {
	h, _ := demo(t, sim.Options{})
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	body := strings.Replace(string(sim.KubeconfigBytes(h.URL, nil, "")), "namespace: default", "namespace: demo", 1)
	require.NoError(t, os.WriteFile(kc, []byte(body), 0o600))
	r := kwatch(t, testEnv(t, "KUBECONFIG="+kc), "pods", "-o", "name", "--watch=false")
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Equal(t, "pod/db-0\npod/web-1\npod/web-2\n", r.stdout, "the context's namespace, demo")
}

func TestWideTable(t *testing.T) {
	_, kc := demo(t, sim.Options{})
	r := kwatch(t, testEnv(t), "pods", "web-1", "-n", "demo", "-o", "wide", "--watch=false", "--kubeconfig", kc)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	lines := strings.Split(r.stdout, "\n")
	require.Regexp(t, `^NAME +READY +STATUS +RESTARTS +AGE +IP +NODE +NOMINATED NODE +READINESS GATES$`, lines[0])
	require.Regexp(t, `^web-1 +2/2 +Running +0 +\S+ +\d+\.\d+\.\d+\.\d+ +node-1 +<none> +<none>$`, lines[1])
}

func TestOutputName(t *testing.T) {
	_, kc := demo(t, sim.Options{})
	r := kwatch(t, testEnv(t), "pods", "-n", "demo", "-o", "name", "--watch=false", "--kubeconfig", kc)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Equal(t, "pod/db-0\npod/web-1\npod/web-2\n", r.stdout)
}

// list is the part of a List document the tests read.
type list struct {
	Kind  string `json:"kind"`
	Items []struct {
		Kind     string         `json:"kind"`
		Metadata map[string]any `json:"metadata"`
	} `json:"items"`
}

func TestOutputJSONAndYAMLList(t *testing.T) {
	_, kc := demo(t, sim.Options{})
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			r := kwatch(t, testEnv(t), "pods", "-n", "demo", "-o", format, "--watch=false", "--kubeconfig", kc)
			require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
			var l list
			if format == "json" {
				require.NoError(t, json.Unmarshal([]byte(r.stdout), &l), "one JSON document:\n%s", r.stdout)
			} else {
				require.NoError(t, yaml.Unmarshal([]byte(r.stdout), &l), "one YAML document:\n%s", r.stdout)
			}
			require.Equal(t, "List", l.Kind)
			var names []string
			for _, it := range l.Items {
				require.Equal(t, "Pod", it.Kind)
				require.NotContains(t, it.Metadata, "managedFields", "managedFields are hidden, as kubectl does")
				names = append(names, it.Metadata["name"].(string))
			}
			require.Equal(t, []string{"db-0", "web-1", "web-2"}, names)
		})
	}
}

func TestOtherResources(t *testing.T) {
	h, kc := demo(t, sim.Options{})
	_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"name":"settings","namespace":"demo"},"data":{"a":"b"}}`))
	require.NoError(t, err)
	_, err = h.Server.Create("nodes", []byte(`{"metadata":{"name":"node-1","labels":{"node-role.kubernetes.io/control-plane":""}},
		"status":{"conditions":[{"type":"Ready","status":"True"}],"nodeInfo":{"kubeletVersion":"v1.37.2"}}}`))
	require.NoError(t, err)
	tests := []struct {
		name string
		args []string
		want [][]string
	}{
		// The server's columns for each kind ("*": the AGE, which depends on when).
		{"configmaps by plural", []string{"get", "configmaps", "-n", "demo"}, [][]string{{"NAME", "DATA", "AGE"}, {"settings", "1", "*"}}},
		{"configmap by short name, all namespaces", []string{"cm", "-A", "-l", "!nothing"},
			[][]string{{"NAMESPACE", "NAME", "DATA", "AGE"}, {"demo", "settings", "1", "*"}}},
		{"nodes are cluster-scoped", []string{"Node"},
			[][]string{{"NAME", "STATUS", "ROLES", "AGE", "VERSION"}, {"node-1", "Ready", "control-plane", "*", "v1.37.2"}}},
		{"nodes wide", []string{"nodes", "-o", "wide"}, [][]string{
			{"NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"},
			{"node-1", "Ready", "control-plane", "*", "v1.37.2", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := kwatch(t, testEnv(t), append(tt.args, "--watch=false", "--kubeconfig", kc)...)
			require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
			rows := fields(r.stdout)
			require.Len(t, rows, len(tt.want), "output:\n%s", r.stdout)
			for i, row := range rows {
				require.Len(t, row, len(tt.want[i]), "row %d of:\n%s", i, r.stdout)
				for j, cell := range tt.want[i] {
					if cell == "*" {
						row[j] = "*"
					}
				}
				require.Equal(t, tt.want[i], row, "row %d of:\n%s", i, r.stdout)
			}
		})
	}
	r := kwatch(t, testEnv(t), "deploy", "-o", "name", "--watch=false", "--kubeconfig", kc)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Empty(t, r.stdout, "no deployments")
	r = kwatch(t, testEnv(t), "deploy", "--watch=false", "--kubeconfig", kc)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Empty(t, r.stdout, "no table for an empty list")
	require.Equal(t, "No resources found in default namespace.\n", r.stderr)
}

// TestWatchTable follows a watch with --output-watch-events (kubectl's
// EVENT column): the initial list as ADDED rows, then a
// change, a new pod and a delete; SIGINT ends it with status 0 and a whole
// last line.
func TestWatchTable(t *testing.T) {
	h, kc := demo(t, sim.Options{})
	p := start(t, testEnv(t), "pods", "-n", "demo", "--output-watch-events", "--kubeconfig", kc)
	lines := readLines(t, p.stdout)
	got := lines.until(func(l string) bool { return strings.Contains(l, "web-2") })
	require.Regexp(t, `^EVENT +NAME +READY +STATUS +RESTARTS +AGE$`, got[0])
	require.Len(t, got, 4, "header and three pods:\n%s", strings.Join(got, "\n"))
	for _, l := range got[1:] {
		require.True(t, strings.HasPrefix(l, "ADDED "), "initial rows are ADDED: %q", l)
	}

	_, err := h.Server.PutPod(sim.Pod{Namespace: "demo", Name: "web-1", NodeName: "node-1", Restarts: 1})
	require.NoError(t, err)
	require.Regexp(t, `^MODIFIED +web-1 +0/2 +Running +1 `, last(lines.until(hasPrefix("MODIFIED"))))
	_, err = h.Server.PutPod(sim.Pod{Namespace: "demo", Name: "web-3"})
	require.NoError(t, err)
	require.Regexp(t, `^ADDED +web-3 +0/2 +Pending +0 `, last(lines.until(hasPrefix("ADDED"))))
	_, err = h.Server.Delete("pods", "demo", "db-0")
	require.NoError(t, err)
	require.Regexp(t, `^DELETED +db-0 `, last(lines.until(hasPrefix("DELETED"))))

	out, code := p.interrupt(lines)
	require.Equal(t, 0, code, "SIGINT is a normal end; stderr: %s", p.stderr.String())
	require.True(t, strings.HasSuffix(out, "\n"), "the last line is whole: %q", out)
}

func hasPrefix(prefix string) func(string) bool {
	return func(l string) bool { return strings.HasPrefix(l, prefix) }
}

func last(lines []string) string { return lines[len(lines)-1] }

func TestSimFlag(t *testing.T) {
	r := kwatch(t, testEnv(t), "pods", "--sim", "--sim-pods", "25", "--sim-namespaces", "3", "--sim-rate", "0",
		"-o", "name", "--watch=false")
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Len(t, strings.Split(strings.TrimSpace(r.stdout), "\n"), 25, "every simulated pod:\n%s", r.stdout)
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "version"} {
		r := kwatch(t, testEnv(t), arg)
		require.Equal(t, 0, r.code)
		require.Regexp(t, `^kwatch \S+ \(go`, r.stdout)
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"get", "--help"}, {"pods", "-h"}, {"sim", "-h"}} {
		r := kwatch(t, testEnv(t), args...)
		require.Equal(t, 0, r.code, "%q", args)
		require.Contains(t, r.stdout, "Examples:", "%q", args)
		require.Empty(t, r.stderr, "%q", args)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "Usage:\n  kwatch [get] RESOURCE [NAME] [flags]   list"},
		{[]string{"help", "get"}, "List RESOURCE, then watch it"},
		{[]string{"help", "sim"}, "Serve a simulated Kubernetes API server"},
	} {
		r := kwatch(t, testEnv(t), tc.args...)
		require.Equal(t, 0, r.code, "%q", tc.args)
		require.Contains(t, r.stdout, tc.want, "%q", tc.args)
		require.Empty(t, r.stderr, "%q", tc.args)
	}
	r := kwatch(t, testEnv(t), "help", "pods")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `no help for "pods"`)
}
