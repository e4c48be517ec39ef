package sim_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

const (
	acceptTable    = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
	acceptMetaList = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	acceptMeta     = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
	acceptAggr     = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)

func TestAuth(t *testing.T) {
	h := simkit.Start(t, sim.Options{BearerToken: "secret"})
	tests := []struct {
		name, auth string
		code       int
	}{
		{"missing", "", 401}, {"wrong", "Bearer nope", 401}, {"basic", "Basic c2VjcmV0", 401}, {"right", "Bearer secret", 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("GET", h.URL+"/api/v1/pods", nil)
			require.NoError(t, err)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := h.Client.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, tc.code, resp.StatusCode)
			if tc.code == 401 {
				require.JSONEq(t, string(capture(t, "status-401.json")), string(body))
			}
		})
	}
	resp, err := h.Client.Get(h.URL + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, "health checks need no token")
}

func TestTLSNegotiatesHTTP2(t *testing.T) {
	h := simkit.Start(t, sim.Options{TLS: true})
	require.True(t, strings.HasPrefix(h.URL, "https://"))
	require.Contains(t, string(h.CACertPEM), "BEGIN CERTIFICATE")
	seedPods(t, h, "demo", 2)
	resp, err := h.Client.Do(h.NewRequest(t, "GET", "/api/v1/pods", nil))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 2, resp.ProtoMajor, "HTTP/2 over TLS")
	w := startWatch(t, h, "/api/v1/pods?watch=1")
	require.Equal(t, 2, w.resp.ProtoMajor)
	require.Equal(t, "ADDED", w.next(t).Type)

	// A cut watch on HTTP/2 resets the stream: the client sees an error, not EOF.
	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultCutWatch, AfterEvents: 1}))
	w2 := startWatch(t, h, "/api/v1/pods?watch=1")
	require.Equal(t, "ADDED", w2.next(t).Type)
	err = w2.end(t)
	require.Error(t, err)
	require.NotErrorIs(t, err, io.EOF)
}

func TestDiscovery(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	tests := []struct {
		path, accept, ctype, kind string
	}{
		{"/api", "", "application/json", "APIVersions"},
		{"/apis", "", "application/json", "APIGroupList"},
		{"/api/v1", "", "application/json", "APIResourceList"},
		{"/apis/apps", "", "application/json", "APIGroup"},
		{"/apis/apps/v1", "", "application/json", "APIResourceList"},
		{"/api", acceptAggr, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", "APIGroupDiscoveryList"},
		{"/apis", acceptAggr, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", "APIGroupDiscoveryList"},
	}
	for _, tc := range tests {
		t.Run(tc.path+" "+tc.kind, func(t *testing.T) {
			req := h.NewRequest(t, "GET", tc.path, nil)
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			resp, err := h.Client.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, 200, resp.StatusCode)
			require.Equal(t, tc.ctype, resp.Header.Get("Content-Type"))
			require.Equal(t, tc.kind, decodeMap(t, body)["kind"])
		})
	}
	// The aggregated core document has the capture's shape for pods.
	_, body := do(t, h, "GET", "/api", acceptAggr, nil)
	var got, real struct {
		Items []struct {
			Versions []struct {
				Version   string           `json:"version"`
				Resources []map[string]any `json:"resources"`
			} `json:"versions"`
		} `json:"items"`
	}
	require.NoError(t, json.Unmarshal(body, &got))
	require.NoError(t, json.Unmarshal(capture(t, "aggregated-discovery-api.json"), &real))
	find := func(rs []map[string]any) map[string]any {
		for _, r := range rs {
			if r["resource"] == "pods" {
				return r
			}
		}
		return nil
	}
	gp, rp := find(got.Items[0].Versions[0].Resources), find(real.Items[0].Versions[0].Resources)
	require.NotNil(t, gp)
	for _, k := range []string{"responseKind", "scope", "singularResource", "verbs", "shortNames"} {
		require.Equal(t, rp[k], gp[k], "pods %s", k)
	}
	code, body := do(t, h, "GET", "/version", "", nil)
	require.Equal(t, 200, code)
	require.Equal(t, "1", decodeMap(t, body)["major"])
}

func TestTableAndMetadataRepresentations(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	seedPods(t, h, "demo", 3)
	putPod(t, h, sim.Pod{Namespace: "demo", Name: "run", NodeName: "node-1", Ready: true, Restarts: 4})

	_, body := do(t, h, "GET", "/api/v1/namespaces/demo/pods", acceptTable, nil)
	got := decodeMap(t, body)
	real := decodeMap(t, capture(t, "list-pods-as-table.json"))
	require.Equal(t, real["kind"], got["kind"])
	require.Equal(t, real["apiVersion"], got["apiVersion"])
	colNames := func(m map[string]any) []string {
		var out []string
		for _, c := range m["columnDefinitions"].([]any) {
			out = append(out, c.(map[string]any)["name"].(string))
		}
		return out
	}
	require.Equal(t, colNames(real), colNames(got))
	rows := got["rows"].([]any)
	require.Len(t, rows, 4)
	last := rows[0].(map[string]any) // "run" sorts first
	require.Equal(t, []any{"run", "2/2", "Running", "4"}, last["cells"].([]any)[:4])
	require.Equal(t, "PartialObjectMetadata", last["object"].(map[string]any)["kind"])

	_, body = do(t, h, "GET", "/api/v1/namespaces/demo/configmaps", acceptTable, nil)
	require.Len(t, decodeMap(t, body)["columnDefinitions"], 3, "NAME, DATA and AGE for configmaps (table_test.go compares every kind)")

	_, body = do(t, h, "GET", "/api/v1/namespaces/demo/pods", acceptMetaList, nil)
	got = decodeMap(t, body)
	real = decodeMap(t, capture(t, "list-pods-metadata-only.json"))
	require.Equal(t, real["kind"], got["kind"])
	require.Equal(t, real["apiVersion"], got["apiVersion"])
	item := items(t, got)[0]
	require.ElementsMatch(t, keysOf(items(t, real)[0]), keysOf(item))

	w := startWatch(t, h, "/api/v1/namespaces/demo/pods?watch=1", "Accept", acceptMeta)
	ev := w.next(t)
	require.Equal(t, "PartialObjectMetadata", ev.Object["kind"])
	require.Equal(t, "meta.k8s.io/v1", ev.Object["apiVersion"])
	require.Equal(t, "run", ev.name())

	code, _ := do(t, h, "GET", "/api/v1/pods", "application/vnd.kubernetes.protobuf", nil)
	require.Equal(t, 406, code)
}

func TestServeShutsDownWithOpenWatches(t *testing.T) {
	srv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	h := simkit.Start(t, sim.Options{}) // for its client only
	_ = h
	ln, err := newListener(t)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	resp, err := http.Get(url + "/api/v1/pods?watch=1")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Eventually(t, func() bool { return srv.Stats().ActiveWatches == 1 }, wait, pollEvery)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-timeAfter(wait):
		t.Fatal("Serve did not return")
	}
	require.EqualValues(t, 0, srv.Stats().ActiveWatches, "every handler returned")
}
