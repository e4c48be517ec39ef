package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestMetricsEndpoints(t *testing.T) {
	h, kc := demo(t, sim.Options{})
	addr := freeAddr(t)
	p := start(t, testEnv(t), "pods", "-n", "demo", "--output-watch-events", "--metrics-addr", addr, "--kubeconfig", kc)
	lines := readLines(t, p.stdout)
	lines.until(func(l string) bool { return strings.Contains(l, "web-2") })
	_, err := h.Server.Delete("pods", "demo", "web-1")
	require.NoError(t, err)
	lines.until(hasPrefix("DELETED"))

	code, body := httpGet(t, "http://"+addr+"/metrics")
	require.Equal(t, 200, code)
	for _, want := range []string{
		"# TYPE kwatch_informer_events_total counter",
		`kwatch_informer_relists_total{resource="pods"} 1`,
		`kwatch_informer_objects{resource="pods"} 2`,
		`kwatch_informer_synced{resource="pods"} 1`,
		`kwatch_printed_events_total{resource="pods",type="ADDED"} 3`,
		`kwatch_printed_events_total{resource="pods",type="DELETED"} 1`,
	} {
		require.Contains(t, body, want, "metrics:\n%s", body)
	}
	code, body = httpGet(t, "http://"+addr+"/healthz")
	require.Equal(t, 200, code, body)
	eventually(t, "ready", func() bool { code, _ := httpGet(t, "http://"+addr+"/readyz"); return code == 200 })

	_, code = p.interrupt(lines)
	require.Equal(t, 0, code, "stderr: %s", p.stderr.String())
}

func TestMetricsAddrInUse(t *testing.T) {
	_, kc := demo(t, sim.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	r := kwatch(t, testEnv(t), "pods", "--metrics-addr", ln.Addr().String(), "--kubeconfig", kc)
	requireOneLineError(t, r, "--metrics-addr")
}

// TestSimCommand serves a simulated cluster with "kwatch sim" and watches
// it with a second kwatch through the kubeconfig it wrote, with TLS and a
// token.
func TestSimCommand(t *testing.T) {
	dir := t.TempDir()
	srv := start(t, testEnv(t), "sim", "--addr", "127.0.0.1:0", "--tls", "--token", "s3cret",
		"--pods", "40", "--namespaces", "2", "--rate", "5", "--dir", dir)
	out := readLines(t, srv.stdout)
	banner := out.until(hasPrefix("try:"))
	require.Regexp(t, `^kwatch sim: serving a simulated cluster at https://127\.0\.0\.1:\d+ \(40 pods in 2 namespaces, 5 changes/s\)$`, banner[0])
	url := regexp.MustCompile(`https://[0-9.:]+`).FindString(banner[0])
	kc, ca := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "ca.crt")
	require.Contains(t, strings.Join(banner, "\n"), ca)

	r := kwatch(t, testEnv(t), "pods", "-A", "-o", "name", "--watch=false", "--kubeconfig", kc)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Greater(t, strings.Count(r.stdout, "pod/"), 20, "the simulated pods:\n%s", r.stdout)

	r = kwatch(t, testEnv(t), "ns", "-s", url, "--certificate-authority", ca, "--token", "s3cret", "--watch=false")
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Contains(t, r.stdout, "ns-001")

	r = kwatch(t, testEnv(t), "pods", "-s", url, "--insecure-skip-tls-verify", "--token", "wrong")
	requireOneLineError(t, r, "401")

	_, code := srv.interrupt(out)
	require.Equal(t, 0, code, "stderr: %s", srv.stderr.String())
}
