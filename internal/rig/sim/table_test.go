package sim_test

import (
	stdjson "encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

type simTable struct {
	Kind    string `json:"kind"`
	Columns []struct {
		Name        string `json:"name"`
		Type        string `json:"type"`
		Format      string `json:"format"`
		Description string `json:"description"`
		Priority    int    `json:"priority"`
	} `json:"columnDefinitions"`
	Rows []struct {
		Cells  []any `json:"cells"`
		Object struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"object"`
	} `json:"rows"`
}

func getTable(t *testing.T, h *simkit.Harness, path string) simTable {
	t.Helper()
	req := h.NewRequest(t, "GET", path, nil)
	req.Header.Set("Accept", tableAccept)
	resp, err := h.Client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	var tb simTable
	require.NoError(t, stdjson.Unmarshal(body, &tb), "%s", body)
	return tb
}

func readTableCapture(t *testing.T, name string) simTable {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "real-apiserver", name))
	require.NoError(t, err)
	var tb simTable
	require.NoError(t, stdjson.Unmarshal(b, &tb))
	return tb
}

// TestTableMatchesRealServer creates in the simulator the objects the real
// server printed in the captures (table-*.json) and compares the Tables:
// every column definition, and every cell but AGE, which depends on when
// each server was asked.
func TestTableMatchesRealServer(t *testing.T) {
	h := simkit.Start(t, sim.Options{Resources: []sim.ResourceInfo{{
		Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true,
		PrinterColumns: []sim.PrinterColumn{
			{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
			{Name: "Color", Type: "string", JSONPath: ".spec.color"},
			{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
		},
	}}})
	create := func(resource, js string) {
		_, err := h.Server.Create(resource, []byte(js))
		require.NoError(t, err, "create %s", resource)
	}
	create("namespaces", `{"metadata":{"name":"demo"},"status":{"phase":"Active"}}`)
	create("deployments.apps", `{"metadata":{"name":"web","namespace":"demo","labels":{"app":"web"}},"spec":{"replicas":2,
		"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[
		{"name":"web","image":"nginx:1.27"},{"name":"sidecar","image":"busybox:1.36"}]}}}}`)
	create("replicasets.apps", `{"metadata":{"name":"web-rs","namespace":"demo"},"spec":{"replicas":3,
		"selector":{"matchLabels":{"app":"rs"}},"template":{"metadata":{"labels":{"app":"rs"}},"spec":{"containers":[
		{"name":"c","image":"nginx:1.27"}]}}}}`)
	create("services", `{"metadata":{"name":"web","namespace":"demo"},"spec":{"type":"ClusterIP","clusterIP":"10.96.66.243",
		"clusterIPs":["10.96.66.243"],"selector":{"app":"web"},"ports":[{"port":80,"protocol":"TCP"}]}}`)
	create("configmaps", `{"metadata":{"name":"settings","namespace":"demo"},"data":{"a":"1","b":"2"}}`)
	create("widgets.example.com", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"demo"},
		"spec":{"size":3,"color":"blue"}}`)

	tests := []struct{ capture, path, only string }{
		{"table-deployments.json", "/apis/apps/v1/namespaces/demo/deployments", ""},
		{"table-replicasets.json", "/apis/apps/v1/namespaces/demo/replicasets", ""},
		{"table-services.json", "/api/v1/namespaces/demo/services", ""},
		{"table-configmaps.json", "/api/v1/namespaces/demo/configmaps", ""},
		{"table-namespaces.json", "/api/v1/namespaces", "demo"},
		{"table-widgets-crd.json", "/apis/example.com/v1/namespaces/demo/widgets", ""},
	}
	for _, tt := range tests {
		t.Run(tt.capture, func(t *testing.T) {
			want, got := readTableCapture(t, tt.capture), getTable(t, h, tt.path)
			require.Equal(t, want.Columns, got.Columns, "column definitions")
			ageCol := -1
			for i, c := range want.Columns {
				if c.Name == "Age" {
					ageCol = i
				}
			}
			rows := map[string][]any{}
			for _, r := range got.Rows {
				require.Equal(t, "PartialObjectMetadata", r.Object.Kind)
				rows[r.Object.Metadata.Name] = r.Cells
			}
			for _, r := range want.Rows {
				name := r.Object.Metadata.Name
				if tt.only != "" && name != tt.only {
					continue
				}
				cells, ok := rows[name]
				require.True(t, ok, "the simulator has a row for %s", name)
				require.Len(t, cells, len(r.Cells))
				if ageCol >= 0 {
					cells[ageCol], r.Cells[ageCol] = nil, nil
				}
				require.Equal(t, r.Cells, cells, "cells of %s: got %v, want the real server's %v", name, cells, r.Cells)
			}
		})
	}
}

// TestTableWatchBookmark: watching as=Table, the simulator sends what the
// real server does: one-row Tables, column definitions on the first event
// only, and a BOOKMARK whose row is printed from an empty object.
func TestTableWatchBookmark(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"name":"c","namespace":"demo"},"data":{"a":"1"}}`))
	require.NoError(t, err)
	req := h.NewRequest(t, "GET", "/api/v1/namespaces/demo/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1", nil)
	req.Header.Set("Accept", tableAccept)
	resp, err := h.Client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	require.GreaterOrEqual(t, len(lines), 2, "%s", body)
	var events []struct {
		Type   string   `json:"type"`
		Object simTable `json:"object"`
	}
	for _, l := range lines {
		var ev struct {
			Type   string   `json:"type"`
			Object simTable `json:"object"`
		}
		require.NoError(t, stdjson.Unmarshal([]byte(l), &ev), "%s", l)
		events = append(events, ev)
	}
	require.Equal(t, "ADDED", events[0].Type)
	require.Len(t, events[0].Object.Columns, 3, "the first event has the columns")
	require.Equal(t, []any{"c", 1.0}, events[0].Object.Rows[0].Cells[:2])
	bm := events[1]
	require.Equal(t, "BOOKMARK", bm.Type)
	require.Equal(t, "Table", bm.Object.Kind)
	require.Empty(t, bm.Object.Columns, "later events have none")
	require.Equal(t, []any{"", 0.0, "<unknown>"}, bm.Object.Rows[0].Cells, "a row printed from an empty object")
}

// TestTableEventsAndStatefulSets: the kinds without a capture print the real
// server's printer's cells (pkg/printers of kubernetes v1.37.2).
func TestTableEventsAndStatefulSets(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	_, err := h.Server.Create("events", []byte(`{"metadata":{"name":"web.1","namespace":"demo"},
		"involvedObject":{"kind":"Pod","name":"web-1","namespace":"demo","fieldPath":"spec.containers{web}"},
		"reason":"Pulled","message":"  pulled the image \n","type":"Normal","count":3,
		"source":{"component":"kubelet","host":"node-1"}}`))
	require.NoError(t, err)
	_, err = h.Server.Create("statefulsets.apps", []byte(`{"metadata":{"name":"db","namespace":"demo"},"spec":{"replicas":3,
		"selector":{"matchLabels":{"app":"db"}},"template":{"metadata":{"labels":{"app":"db"}},"spec":{"containers":[
		{"name":"pg","image":"postgres:17"}]}}}}`))
	require.NoError(t, err)

	ev := getTable(t, h, "/api/v1/namespaces/demo/events")
	require.Len(t, ev.Columns, 10)
	require.Equal(t, []any{"<unknown>", "Normal", "Pulled", "pod/web-1", "spec.containers{web}", "kubelet, node-1",
		"pulled the image", "<unknown>", 3.0, "web.1"}, ev.Rows[0].Cells, "no timestamps: <unknown>; the message trimmed")

	ss := getTable(t, h, "/apis/apps/v1/namespaces/demo/statefulsets")
	require.Len(t, ss.Columns, 5)
	cells := ss.Rows[0].Cells
	cells[2] = nil // AGE
	require.Equal(t, []any{"db", "0/3", nil, "pg", "postgres:17"}, cells)
}
