package printers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// ago is an RFC 3339 time d before now.
func ago(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }

func decodePod(t *testing.T, js string) *Pod {
	t.Helper()
	var p Pod
	require.NoError(t, fastJSON.Unmarshal([]byte(js), &p), "pod JSON: %s", js)
	return &p
}

// pod builds pod JSON from spec and status fragments.
func pod(spec, status string) string {
	return fmt.Sprintf(`{"metadata":{"name":"p","namespace":"ns","creationTimestamp":%q},"spec":{%s},"status":{%s}}`,
		ago(90*time.Second), spec, status)
}

const (
	twoContainers = `"containers":[{"name":"a"},{"name":"b"}]`
	oneContainer  = `"containers":[{"name":"a"}]`
	readyTrue     = `{"type":"Ready","status":"True"}`
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		js   string
		want PodSummary
	}{
		{"running and ready", pod(twoContainers, `"phase":"Running","containerStatuses":[
			{"name":"a","ready":true,"restartCount":0,"state":{"running":{}}},
			{"name":"b","ready":true,"restartCount":0,"state":{"running":{}}}]`),
			PodSummary{"2/2", "Running", "0"}},
		{"running, one not ready", pod(twoContainers, `"phase":"Running","containerStatuses":[
			{"name":"a","ready":true,"state":{"running":{}}},{"name":"b","ready":false,"state":{"running":{}}}]`),
			PodSummary{"1/2", "Running", "0"}},
		{"pending without statuses", pod(oneContainer, `"phase":"Pending"`), PodSummary{"0/1", "Pending", "0"}},
		{"container creating", pod(oneContainer, `"phase":"Pending","containerStatuses":[
			{"name":"a","state":{"waiting":{"reason":"ContainerCreating"}}}]`),
			PodSummary{"0/1", "ContainerCreating", "0"}},
		{"crash loop with restart age", pod(oneContainer, fmt.Sprintf(`"phase":"Running","containerStatuses":[
			{"name":"a","restartCount":5,"state":{"waiting":{"reason":"CrashLoopBackOff"}},
			 "lastState":{"terminated":{"exitCode":1,"reason":"Error","finishedAt":%q}}}]`, ago(5*time.Minute))),
			PodSummary{"0/1", "CrashLoopBackOff", "5 (5m ago)"}},
		{"first container's reason wins", pod(twoContainers, `"phase":"Running","containerStatuses":[
			{"name":"a","state":{"waiting":{"reason":"ImagePullBackOff"}}},
			{"name":"b","state":{"waiting":{"reason":"ErrImagePull"}}}]`),
			PodSummary{"0/2", "ImagePullBackOff", "0"}},
		{"completed", pod(oneContainer, `"phase":"Succeeded","containerStatuses":[
			{"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]`),
			PodSummary{"0/1", "Completed", "0"}},
		{"completed beside a running container is Running", pod(twoContainers, `"phase":"Running","conditions":[`+readyTrue+`],
			"containerStatuses":[{"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},
			{"name":"b","ready":true,"state":{"running":{}}}]`),
			PodSummary{"1/2", "Running", "0"}},
		{"completed beside a running container, pod not ready", pod(twoContainers, `"phase":"Running",
			"containerStatuses":[{"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},
			{"name":"b","ready":true,"state":{"running":{}}}]`),
			PodSummary{"1/2", "NotReady", "0"}},
		{"terminated by a signal", pod(oneContainer, `"phase":"Failed","containerStatuses":[
			{"name":"a","state":{"terminated":{"exitCode":137,"signal":9}}}]`),
			PodSummary{"0/1", "Signal:9", "0"}},
		{"terminated with an exit code", pod(oneContainer, `"phase":"Failed","containerStatuses":[
			{"name":"a","state":{"terminated":{"exitCode":3}}}]`),
			PodSummary{"0/1", "ExitCode:3", "0"}},
		{"evicted: status reason", pod(oneContainer, `"phase":"Failed","reason":"Evicted"`),
			PodSummary{"0/1", "Evicted", "0"}},
		{"scheduling gated", pod(oneContainer, `"phase":"Pending","conditions":[
			{"type":"PodScheduled","status":"False","reason":"SchedulingGated"}]`),
			PodSummary{"0/1", "SchedulingGated", "0"}},
		{"init container running", pod(`"initContainers":[{"name":"i1"},{"name":"i2"}],`+oneContainer,
			`"phase":"Pending","initContainerStatuses":[{"name":"i1","state":{"running":{}}},
			{"name":"i2","state":{"waiting":{"reason":"PodInitializing"}}}]`),
			PodSummary{"0/1", "Init:0/2", "0"}},
		{"second init container running", pod(`"initContainers":[{"name":"i1"},{"name":"i2"}],`+oneContainer,
			`"phase":"Pending","initContainerStatuses":[{"name":"i1","state":{"terminated":{"exitCode":0,"reason":"Completed"}}},
			{"name":"i2","state":{"running":{}}}]`),
			PodSummary{"0/1", "Init:1/2", "0"}},
		{"init crash loop", pod(`"initContainers":[{"name":"i1"}],`+oneContainer,
			`"phase":"Pending","initContainerStatuses":[{"name":"i1","restartCount":3,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]`),
			PodSummary{"0/1", "Init:CrashLoopBackOff", "3"}},
		{"init error", pod(`"initContainers":[{"name":"i1"}],`+oneContainer,
			`"phase":"Pending","initContainerStatuses":[{"name":"i1","state":{"terminated":{"exitCode":1,"reason":"Error"}}}]`),
			PodSummary{"0/1", "Init:Error", "0"}},
		{"init exit code", pod(`"initContainers":[{"name":"i1"}],`+oneContainer,
			`"phase":"Pending","initContainerStatuses":[{"name":"i1","state":{"terminated":{"exitCode":2}}}]`),
			PodSummary{"0/1", "Init:ExitCode:2", "0"}},
		{"sidecar counts as a container", pod(`"initContainers":[{"name":"proxy","restartPolicy":"Always"}],`+oneContainer,
			`"phase":"Running","conditions":[{"type":"Initialized","status":"True"}],
			"initContainerStatuses":[{"name":"proxy","ready":true,"started":true,"restartCount":1,"state":{"running":{}}}],
			"containerStatuses":[{"name":"a","ready":true,"restartCount":2,"state":{"running":{}}}]`),
			PodSummary{"2/2", "Running", "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(decodePod(t, tt.js), now)
			require.Equal(t, tt.want, got, "got %+v, want %+v", got, tt.want)
		})
	}
}

func TestSummarizeDeletion(t *testing.T) {
	withDeletion := func(status string) string {
		return strings.Replace(pod(oneContainer, status), `"namespace":"ns"`,
			fmt.Sprintf(`"namespace":"ns","deletionTimestamp":%q`, ago(time.Second)), 1)
	}
	tests := []struct {
		name, status, want string
	}{
		{"running pod being deleted", `"phase":"Running","containerStatuses":[{"name":"a","ready":true,"state":{"running":{}}}]`, "Terminating"},
		{"succeeded pod being deleted keeps its status", `"phase":"Succeeded","containerStatuses":[
			{"name":"a","state":{"terminated":{"exitCode":0,"reason":"Completed"}}}]`, "Completed"},
		{"pod on a lost node", `"phase":"Running","reason":"NodeLost"`, "Unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(decodePod(t, withDeletion(tt.status)), now).Status
			require.Equal(t, tt.want, got, "got %q, want %q", got, tt.want)
		})
	}
}

func TestPodRowWide(t *testing.T) {
	tests := []struct {
		name, js string
		want     []string
	}{
		{"scheduled pod with gates", pod(`"nodeName":"node-1","readinessGates":[{"conditionType":"g1"},{"conditionType":"g2"}],`+oneContainer,
			`"phase":"Running","podIP":"10.0.0.9","podIPs":[{"ip":"10.0.0.9"},{"ip":"fd00::9"}],
			"conditions":[{"type":"g1","status":"True"},{"type":"g2","status":"False"}],
			"containerStatuses":[{"name":"a","ready":true,"state":{"running":{}}}]`),
			[]string{"p", "1/1", "Running", "0", "90s", "10.0.0.9", "node-1", "<none>", "1/2"}},
		{"pending pod", pod(oneContainer, `"phase":"Pending","nominatedNodeName":"node-2"`),
			[]string{"p", "0/1", "Pending", "0", "90s", "<none>", "<none>", "node-2", "<none>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PodRow(decodePod(t, tt.js), now, true)
			require.Equal(t, tt.want, got, "got %q, want %q", got, tt.want)
		})
	}
}

func TestAge(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{5 * time.Second, "5s"},
		{119 * time.Second, "119s"},
		{3*time.Minute + 2*time.Second, "3m2s"},
		{5 * time.Minute, "5m"},
		{42 * time.Minute, "42m"},
		{4 * time.Hour, "4h"},
		{4*time.Hour + 10*time.Minute, "4h10m"},
		{20 * time.Hour, "20h"},
		{50 * time.Hour, "2d2h"},
		{48 * time.Hour, "2d"},
		{30 * 24 * time.Hour, "30d"},
		{-time.Second / 2, "0s"},
	}
	for _, tt := range tests {
		got := Age(now.Add(-tt.d), now)
		require.Equal(t, tt.want, got, "Age(now-%s): got %q, want %q", tt.d, got, tt.want)
	}
	require.Equal(t, "<unknown>", Age(time.Time{}, now), "zero time")
}

// TestRealCapture checks the pod table against the cells a real API
// server printed (as=Table) for the same pods; AGE depends on when the
// table was asked for, so it is left out.
func TestRealCapture(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "internal", "testdata", "real-apiserver")
	list, err := os.ReadFile(filepath.Join(dir, "list-pods-rv0.json"))
	require.NoError(t, err)
	table, err := os.ReadFile(filepath.Join(dir, "list-pods-as-table.json"))
	require.NoError(t, err)
	var pods struct{ Items []Pod }
	require.NoError(t, fastJSON.Unmarshal(list, &pods))
	var server struct {
		Rows []struct{ Cells []string }
	}
	require.NoError(t, json.Unmarshal(table, &server))
	want := map[string][]string{}
	for _, r := range server.Rows {
		want[r.Cells[0]] = append(r.Cells[:4:4], r.Cells[5:]...)
	}
	require.Len(t, pods.Items, len(want), "pods in the list and rows in the table")
	for i := range pods.Items {
		row := PodRow(&pods.Items[i], now, true)
		got := append(row[:4:4], row[5:]...)
		require.Equal(t, want[row[0]], got, "pod %s: got %q, want the server's %q", row[0], got, want[row[0]])
	}
}
