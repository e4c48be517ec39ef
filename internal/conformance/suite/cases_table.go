package suite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
)

// The table cases run the kwatch command against the target and compare the
// table it prints with the server's own Table of the same objects (as=Table,
// what kubectl prints): the same columns in the same order, priority-1 ones
// only with -o wide, headers upper-cased, and every cell as kubectl formats it.
// AGE cells are left out: the server computes them when asked, and the two
// requests are not asked at the same second.
func tableCases() []Case {
	return []Case{
		{Name: "table/kwatch-prints-the-servers-columns", Run: testTableColumns},
		{Name: "table/kwatch-watch-prints-server-rows", Run: testTableWatch},
		{Name: "table/kwatch-diff-names-the-changed-spec-fields", Run: testKwatchDiff},
	}
}

// tableAccept is kubectl get's Accept header.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"

// widgetCRD is a custom resource with printer columns, as the real server
// was captured with (table-widgets-crd.json).
var widgetCRD = map[string]any{
	"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
	"metadata": map[string]any{"name": "widgets.example.com"},
	"spec": map[string]any{
		"group": "example.com", "scope": "Namespaced",
		"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
		"versions": []any{map[string]any{
			"name": "v1", "served": true, "storage": true,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
				"spec": map[string]any{"type": "object", "properties": map[string]any{
					"size": map[string]any{"type": "integer"}, "color": map[string]any{"type": "string"}}}}}},
			"additionalPrinterColumns": []any{
				map[string]any{"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
				map[string]any{"name": "Color", "type": "string", "jsonPath": ".spec.color"},
				map[string]any{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
			},
		}},
	},
}

// ensureWidgets makes widgets.example.com servable: the real server gets the
// CRD (once per cluster); the simulator has the resource registered by its
// target with the same printer columns.
func ensureWidgets(t T, e *Env) {
	t.Helper()
	a := call(t, e, http.MethodPost, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", nil, ctJSON, jsonBody(t, widgetCRD))
	switch {
	case a.code/100 == 2, a.code == http.StatusConflict: // created, or by an earlier run
	case a.code == http.StatusNotFound: // no apiextensions: the simulator
	default:
		require.Failf(t, "create the widgets CRD", "%d %s", a.code, a.body)
	}
	path := "/apis/example.com/v1/namespaces/" + e.NS + "/widgets"
	eventually(t, e, time.Minute, "widgets are served", func() bool {
		return call(t, e, http.MethodGet, path, nil, "", nil).code == http.StatusOK
	})
}

func testTableColumns(t T, e *Env) {
	ensureWidgets(t, e)
	ns := "/api/v1/namespaces/" + e.NS
	mustCall(t, e, http.MethodPost, deployPath(e, ""), nil, ctJSON, jsonBody(t, deployment("web", 2, "web", "sidecar")))
	mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, configMap("settings", map[string]string{"a": "1", "b": "2"})))
	mustCall(t, e, http.MethodPost, ns+"/services", nil, ctJSON, jsonBody(t, map[string]any{
		"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"selector": map[string]any{"app": "web"},
			"ports": []any{map[string]any{"port": 80, "protocol": "TCP", "name": "http"}, map[string]any{"port": 443, "protocol": "TCP", "name": "tls"}}}}))
	mustCall(t, e, http.MethodPost, "/apis/example.com/v1/namespaces/"+e.NS+"/widgets", nil, ctJSON, jsonBody(t, map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w1"},
		"spec": map[string]any{"size": 3, "color": "blue"}}))
	kw := buildKwatch(t, e)
	tests := []struct {
		args []string // after "get"
		path string   // the server's Table of the same objects
	}{
		{[]string{"deployments", "-n", e.NS}, deployPath(e, "")},
		{[]string{"configmaps", "-n", e.NS}, cmPath(e, "")},
		{[]string{"services", "-n", e.NS}, ns + "/services"},
		{[]string{"namespaces", e.NS}, ns},
		{[]string{"widgets", "-n", e.NS}, "/apis/example.com/v1/namespaces/" + e.NS + "/widgets"},
	}
	for _, tt := range tests {
		for _, wide := range []bool{false, true} {
			args := append([]string{"get"}, tt.args...)
			if wide {
				args = append(args, "-o", "wide")
			}
			out := kw.run(t, e, append(args, "--watch=false")...)
			want := serverTable(t, e, tt.path, wide)
			got := parseTable(t, out)
			what := strings.Join(args, " ")
			t.Logf("kwatch %s:\n%s", what, out)
			require.Equal(t, want.headers, got.headers, "%s: headers", what)
			require.Equal(t, len(want.rows), len(got.rows), "%s: rows of\n%s", what, out)
			for i := range want.rows {
				require.Equal(t, want.rows[i], got.rows[i], "%s: row %d of\n%s", what, i, out)
			}
		}
	}
}

// testTableWatch follows configmaps with kwatch -w: the initial row, then the
// MODIFIED row of a change, each with the cells the server's Table has.
func testTableWatch(t T, e *Env) {
	mustCall(t, e, http.MethodPost, cmPath(e, ""), nil, ctJSON, jsonBody(t, configMap("settings", map[string]string{"a": "1"})))
	kw := buildKwatch(t, e)
	lines := kw.start(t, e, "get", "configmaps", "-n", e.NS, "--output-watch-events")
	next := func(what string) string {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "%s: kwatch's output ended", what)
			return l
		case <-e.Ctx.Done():
			require.FailNow(t, what+": no line in time")
			return ""
		}
	}
	header := next("header")
	require.Regexp(t, `^EVENT +NAME +DATA +AGE$`, header)
	require.Regexp(t, `^ADDED +settings +1 +\S+$`, next("initial row"))
	patch := []byte(`{"data":{"b":"2","c":"3"}}`)
	mustCall(t, e, http.MethodPatch, cmPath(e, "settings"), nil, ctMerge, patch)
	want := serverTable(t, e, cmPath(e, ""), false)
	require.Equal(t, []string{"settings", "3", "*"}, want.rows[0])
	row := parseRow(next("modified row"), tableStarts(header))
	row[len(row)-1] = "*"
	require.Equal(t, append([]string{"MODIFIED"}, want.rows[0]...), row, "the MODIFIED row is the server's")
}

// table is a printed table: its headers and rows of cells, AGE as "*".
type table struct {
	headers []string
	rows    [][]string
}

// serverTable asks for the server's Table at path and renders it as kubectl
// renders cells.
func serverTable(t T, e *Env, path string, wide bool) table {
	t.Helper()
	req, err := http.NewRequestWithContext(e.Ctx, http.MethodGet, path, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", tableAccept)
	resp, err := e.Admin.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var tb struct {
		Kind    string `json:"kind"`
		Columns []struct {
			Name     string `json:"name"`
			Priority int    `json:"priority"`
		} `json:"columnDefinitions"`
		Rows []struct {
			Cells []any `json:"cells"`
		} `json:"rows"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&tb), "%s", body)
	require.Equal(t, "Table", tb.Kind)
	var out table
	var shown []int
	for i, c := range tb.Columns {
		if wide || c.Priority == 0 {
			shown = append(shown, i)
			out.headers = append(out.headers, strings.ToUpper(c.Name))
		}
	}
	for _, r := range tb.Rows {
		var row []string
		for _, i := range shown {
			cell := ""
			if i < len(r.Cells) && r.Cells[i] != nil {
				cell = fmt.Sprint(r.Cells[i])
			}
			if strings.ToUpper(tb.Columns[i].Name) == "AGE" {
				cell = "*"
			}
			row = append(row, cell)
		}
		out.rows = append(out.rows, row)
	}
	return out
}

// parseTable splits kwatch's printed table into cells by the header's column
// starts (columns are separated by at least three spaces), AGE as "*".
func parseTable(t T, out string) table {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.NotEmpty(t, lines)
	starts := tableStarts(lines[0])
	tb := table{headers: parseRow(lines[0], starts)}
	for _, l := range lines[1:] {
		row := parseRow(l, starts)
		for i, h := range tb.headers {
			if h == "AGE" && i < len(row) {
				row[i] = "*"
			}
		}
		tb.rows = append(tb.rows, row)
	}
	return tb
}

// tableStarts returns where each column of a header line starts.
func tableStarts(header string) []int {
	starts := []int{0}
	for i := 1; i < len(header); i++ {
		if header[i] != ' ' && strings.HasSuffix(header[:i], "  ") {
			starts = append(starts, i)
		}
	}
	return starts
}

func parseRow(line string, starts []int) []string {
	row := make([]string, len(starts))
	for i, s := range starts {
		end := len(line)
		if i+1 < len(starts) && starts[i+1] < end {
			end = starts[i+1]
		}
		if s < len(line) {
			row[i] = strings.TrimSpace(line[s:end])
		}
	}
	return row
}

// kwatchCmd is the kwatch command built for a case, with the target's admin
// credentials.
type kwatchCmd struct {
	bin  string
	args []string // connection flags
	env  []string
}

// buildKwatch builds the kwatch command from this repository and writes the
// files its connection flags name. The build is Go's cached one after the
// first.
func buildKwatch(t T, e *Env) *kwatchCmd {
	t.Helper()
	dir, err := os.MkdirTemp("", "kwatch-conformance-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "cmd", "kwatch", "main.go"))
	require.NoError(t, err, "the kwatch command's source, two directories up")
	bin := filepath.Join(dir, "kwatch")
	build := exec.CommandContext(e.Ctx, "go", "build", "-o", bin, "./cmd/kwatch")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		require.FailNow(t, "build kwatch", "%v\n%s", err, out)
	}
	cfg := e.Target.Config(Admin)
	ca := filepath.Join(dir, "ca.crt")
	require.NoError(t, os.WriteFile(ca, cfg.TLS.CAData, 0o600))
	return &kwatchCmd{
		bin:  bin,
		args: []string{"--server", cfg.Host, "--token", cfg.Auth.BearerToken, "--certificate-authority", ca},
		env:  []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH")},
	}
}

// run runs kwatch to completion and returns its stdout.
func (k *kwatchCmd) run(t T, e *Env, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(e.Ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, append(args, k.args...)...)
	cmd.Env = k.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "kwatch %s: stderr: %s", strings.Join(args, " "), stderr.String())
	return stdout.String()
}

// start runs kwatch until the case ends and returns its stdout's lines.
func (k *kwatchCmd) start(t T, e *Env, args ...string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(e.Ctx)
	cmd := exec.CommandContext(ctx, k.bin, append(args, k.args...)...)
	cmd.Env = k.env
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = cmd.Wait()
	})
	return lines
}
