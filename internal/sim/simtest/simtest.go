// Package simtest starts a simulated API server (package sim) for a test: it serves
// on 127.0.0.1:0, plain HTTP or TLS with HTTP/2, and stops when the test ends.
//
//	h := simtest.Start(t, sim.Options{})
//	h.Server.PutPod(sim.Pod{Namespace: "demo", Name: "web-1"})
//	resp, err := h.Client.Do(h.NewRequest(t, "GET", "/api/v1/pods", nil))
package simtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/sim"
)

// Harness is a running simulated server. Its fields are read-only.
type Harness struct {
	// Server is the in-process API: objects, faults, stats.
	Server *sim.Server
	// URL is the base URL, "http://127.0.0.1:port" or "https://127.0.0.1:port".
	URL string
	// CACertPEM is the certificate to trust with TLS; nil otherwise.
	CACertPEM []byte
	// Token is Options.BearerToken ("" when auth is off).
	Token string
	// Client talks to the server: it trusts CACertPEM and negotiates HTTP/2 over TLS.
	// It does not add the token; NewRequest does.
	Client *http.Client
}

// Start serves a new sim.Server built from opts until the test ends. It fails the
// test at once if the server cannot start, and reports a failed shutdown.
func Start(t testing.TB, opts sim.Options) *Harness {
	t.Helper()
	srv, err := sim.New(opts)
	if err != nil {
		t.Fatalf("simtest: sim.New: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("simtest: listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ctx, ln) }()
	h := &Harness{Server: srv, URL: "http://" + ln.Addr().String(), Token: opts.BearerToken}
	transport := &http.Transport{ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 64}
	if opts.TLS {
		h.URL = "https://" + ln.Addr().String()
		h.CACertPEM = srv.CACertPEM()
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(h.CACertPEM)
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	h.Client = &http.Client{Transport: transport}
	t.Cleanup(func() {
		transport.CloseIdleConnections()
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("simtest: server shutdown: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Errorf("simtest: server did not shut down within 60s")
		}
	})
	return h
}

// NewRequest builds a request for path (with query) carrying the bearer token.
func (h *Harness) NewRequest(t testing.TB, method, path string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, h.URL+path, body)
	if err != nil {
		t.Fatalf("simtest: new request %s %s: %v", method, path, err)
	}
	if h.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.Token)
	}
	return req
}

// Kubeconfig writes a kubeconfig for the server into the test's temporary directory
// and returns its path; the current context's namespace is "default".
func (h *Harness) Kubeconfig(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, KubeconfigBytes(h.URL, h.CACertPEM, h.Token), 0o600); err != nil {
		t.Fatalf("simtest: write kubeconfig: %v", err)
	}
	return path
}

// KubeconfigBytes renders a kubeconfig for a server URL, its CA and token.
func KubeconfigBytes(url string, caPEM []byte, token string) []byte {
	cluster := fmt.Sprintf("    server: %s\n", url)
	if len(caPEM) > 0 {
		cluster += fmt.Sprintf("    certificate-authority-data: %s\n", base64.StdEncoding.EncodeToString(caPEM))
	}
	user := "{}"
	if token != "" {
		user = fmt.Sprintf("\n    token: %s", token)
	}
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: sim
  cluster:
%scontexts:
- name: sim
  context:
    cluster: sim
    user: sim
    namespace: default
current-context: sim
users:
- name: sim
  user: %s
`, cluster, user))
}
