package main

import (
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// tablesCluster serves one or more objects of every kind the simulator
// prints a Table for, plus a custom resource with printer columns, created
// three days ago to the second so that AGE prints "3d" to kubectl and kwatch
// alike.
func tablesCluster(t *testing.T) (*simkit.Harness, string) {
	t.Helper()
	var loading atomic.Bool
	loading.Store(true)
	created := time.Now().Add(-72 * time.Hour).Truncate(time.Second)
	stamp := created.UTC().Format(time.RFC3339)
	h := simkit.Start(t, sim.Options{
		Clock: func() time.Time {
			if loading.Load() {
				return created
			}
			return time.Now()
		},
		Resources: []sim.ResourceInfo{{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget",
			Namespaced: true, PrinterColumns: []sim.PrinterColumn{
				{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
				{Name: "Color", Type: "string", JSONPath: ".spec.color"},
				{Name: "Ratio", Type: "number", JSONPath: ".spec.ratio", Priority: 1},
				{Name: "Shiny", Type: "boolean", JSONPath: ".spec.shiny", Priority: 1},
				{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
			}}},
	})
	for _, o := range []struct{ resource, body string }{
		{"namespaces", `{"metadata":{"name":"demo"},"status":{"phase":"Active"}}`},
		{"deployments.apps", `{"metadata":{"name":"web","namespace":"demo"},"spec":{"replicas":3,
			"selector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"In","values":["front","edge"]}]},
			"template":{"metadata":{"labels":{"app":"web","tier":"front"}},"spec":{"containers":[
			{"name":"web","image":"nginx:1.27"},{"name":"sidecar","image":"busybox:1.36"}]}}},
			"status":{"replicas":3,"readyReplicas":2,"updatedReplicas":3,"availableReplicas":2}}`},
		{"replicasets.apps", `{"metadata":{"name":"web-5d4f","namespace":"demo"},"spec":{"replicas":3,
			"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[
			{"name":"web","image":"nginx:1.27"}]}}},"status":{"replicas":3,"readyReplicas":1}}`},
		{"statefulsets.apps", `{"metadata":{"name":"db","namespace":"demo"},"spec":{"replicas":2,"serviceName":"db",
			"selector":{"matchLabels":{"app":"db"}},"template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[
			{"name":"pg","image":"postgres:17"}]}}},"status":{"replicas":2,"readyReplicas":2}}`},
		{"services", `{"metadata":{"name":"web","namespace":"demo"},"spec":{"type":"ClusterIP","clusterIP":"10.96.0.10",
			"clusterIPs":["10.96.0.10"],"selector":{"app":"web","tier":"front"},"ports":[{"name":"http","port":80,"protocol":"TCP"},
			{"name":"dns","port":53,"protocol":"UDP"}]}}`},
		{"services", `{"metadata":{"name":"edge","namespace":"demo"},"spec":{"type":"LoadBalancer","clusterIP":"10.96.0.11",
			"clusterIPs":["10.96.0.11"],"ports":[{"port":443,"nodePort":30443,"protocol":"TCP"}]},
			"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.7"}]}}}`},
		{"services", `{"metadata":{"name":"ext","namespace":"demo"},"spec":{"type":"ExternalName","externalName":"db.example.com"}}`},
		{"configmaps", `{"metadata":{"name":"settings","namespace":"demo"},"data":{"a":"1","b":"2"},"binaryData":{"c":"AA=="}}`},
		{"secrets", `{"metadata":{"name":"token","namespace":"demo"},"type":"Opaque","data":{"t":"c2VjcmV0"}}`},
		{"nodes", `{"metadata":{"name":"node-1","labels":{"node-role.kubernetes.io/control-plane":"","kubernetes.io/role":"infra"}},
			"spec":{"unschedulable":true},"status":{"conditions":[{"type":"Ready","status":"True"}],
			"addresses":[{"type":"InternalIP","address":"192.168.1.10"}],
			"nodeInfo":{"kubeletVersion":"v1.37.2","osImage":"Debian GNU/Linux 13","kernelVersion":"6.12.0","architecture":"amd64",
			"containerRuntimeVersion":"containerd://2.1.0"}}}`},
		{"nodes", `{"metadata":{"name":"node-2"},"status":{"conditions":[{"type":"Ready","status":"False"}]}}`},
		{"events", `{"metadata":{"name":"web.17a","namespace":"demo"},"involvedObject":{"kind":"Pod","name":"web-1",
			"namespace":"demo","fieldPath":"spec.containers{web}"},"reason":"Pulled","message":"Pulled the image",
			"type":"Normal","count":4,"firstTimestamp":"` + stamp + `","lastTimestamp":"` + stamp + `",
			"source":{"component":"kubelet","host":"node-1"}}`},
		{"events", `{"metadata":{"name":"db.17b","namespace":"demo"},"involvedObject":{"kind":"StatefulSet","name":"db",
			"namespace":"demo"},"reason":"SuccessfulCreate","message":"create Pod db-0 in StatefulSet db successful",
			"type":"Normal","eventTime":"` + created.Format("2006-01-02T15:04:05.000000Z07:00") + `",
			"reportingComponent":"statefulset-controller","reportingInstance":"cm-1"}`},
		{"widgets.example.com", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"demo"},
			"spec":{"size":3,"color":"blue","ratio":0.5,"shiny":true}}`},
		{"widgets.example.com", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w2","namespace":"demo"},
			"spec":{"color":"a very long color\nwith a second line"}}`},
	} {
		_, err := h.Server.Create(o.resource, []byte(o.body))
		require.NoError(t, err, "create %s", o.resource)
	}
	loading.Store(false)
	return h, h.Kubeconfig(t)
}

// TestGoldenKubectlTables compares kwatch's tables of every kind the
// simulator prints with kubectl's, byte for byte: the server's columns,
// priority-1 ones only with -o wide, kubectl's formatting of integers,
// numbers, booleans, missing cells and a cell with a line break.
func TestGoldenKubectlTables(t *testing.T) {
	bin := goldenKubectl(t)
	_, kc := tablesCluster(t)
	var cases [][]string
	for _, kind := range []string{"deployments", "replicasets", "statefulsets", "services", "configmaps", "secrets", "events", "widgets"} {
		cases = append(cases, []string{kind, "-n", "demo"}, []string{kind, "-n", "demo", "-o", "wide"}, []string{kind, "-A"})
	}
	cases = append(cases, []string{"nodes"}, []string{"nodes", "-o", "wide"}, []string{"namespaces", "demo"},
		[]string{"deploy,svc", "-n", "demo"}, []string{"services", "web", "-n", "demo", "--no-headers"})
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			want := runKubectl(t, bin, kc, append([]string{"get"}, args...)...)
			require.Equal(t, 0, want.code, "kubectl: %s", want.stderr)
			require.NotEmpty(t, want.stdout, "kubectl printed a table")
			t.Logf("kubectl get %s:\n%s", strings.Join(args, " "), want.stdout)
			got := kwatch(t, testEnv(t), append(append([]string{"get"}, args...), "--watch=false", "--kubeconfig", kc)...)
			require.Equal(t, 0, got.code, "kwatch: %s", got.stderr)
			require.Equal(t, want.stdout, got.stdout, "stdout of kwatch (actual) against kubectl's (expected)")
		})
	}
}

// TestGoldenKubectlTablesWatch compares kubectl get -w with kwatch's watch
// of other kinds byte for byte: the initial list, then the row of a change,
// both printed from the server's Table rows.
func TestGoldenKubectlTablesWatch(t *testing.T) {
	bin := goldenKubectl(t)
	h, kc := tablesCluster(t)
	cases := []struct {
		args           []string
		initial, after int
		resource, name string
		patch          string
	}{
		{[]string{"deployments", "-n", "demo", "-w"}, 2, 1, "deployments.apps", "web", `{"spec":{"replicas":5}}`},
		{[]string{"configmaps", "-n", "demo", "-w", "--output-watch-events"}, 2, 1, "configmaps", "settings", `{"data":{"d":"4"}}`},
		{[]string{"widgets", "-n", "demo", "-w", "-o", "wide"}, 3, 1, "widgets.example.com", "w1", `{"spec":{"size":7,"shiny":false}}`},
		{[]string{"services", "-n", "demo", "-w"}, 4, 1, "services", "web", `{"spec":{"selector":{"app":"web2"}}}`},
		{[]string{"services", "web", "-n", "demo", "-w"}, 2, 1, "services", "web", `{"spec":{"selector":{"app":"web3"}}}`},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			// Only this test watches the cluster: with the last case's
			// watches gone, two open ones are kubectl's and kwatch's.
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
			want, got := take(klines, tc.initial), take(wlines, tc.initial)
			eventually(t, "kwatch synced", func() bool { return ready("http://" + addr + "/readyz") })
			eventually(t, "both watches open", func() bool { return h.Server.Stats().ActiveWatches >= 2 })
			_, err = h.Server.Patch(tc.resource, "demo", tc.name, []byte(tc.patch))
			require.NoError(t, err)
			want, got = append(want, take(klines, tc.after)...), append(got, take(wlines, tc.after)...)
			require.Equal(t, want, got, "kwatch (actual) against kubectl (expected):\n%s\n---\n%s",
				strings.Join(want, "\n"), strings.Join(got, "\n"))
		})
	}
}
