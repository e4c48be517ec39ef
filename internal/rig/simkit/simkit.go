// Package simkit starts kwatchtest's server for kwatch's own tests that
// need the simulator behind it: options the public kit does not offer
// (a fixed clock, extra resources, users, limits) and the simulator's own
// API (raw faults, stats, in-process writes). A test that needs neither
// uses kwatchtest.Start; this is the same server, so the public kit is what
// every test runs on.
//
//	h := simkit.Start(t, sim.Options{Users: users})
//	h.Server.PutPod(sim.Pod{Namespace: "demo", Name: "web-1"})
//	resp, err := h.Client.Do(h.NewRequest(t, "GET", "/api/v1/pods", nil))
package simkit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"testing"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit/hook"
	"github.com/kwatch/kwatch/kwatchtest"
)

// Harness is a running server. Its fields are read-only.
type Harness struct {
	// Kit is the public server: Config, Kubeconfig, seeding, faults.
	Kit *kwatchtest.Server
	// Server is the simulator behind Kit: objects, faults, stats.
	Server *sim.Server
	// URL is the base URL, "http://127.0.0.1:port" or "https://127.0.0.1:port".
	URL string
	// CACertPEM is the certificate to trust with TLS; nil otherwise.
	CACertPEM []byte
	// Token is Options.BearerToken ("" when auth is off).
	Token string
	// Client talks to the server: it trusts CACertPEM and negotiates HTTP/2
	// over TLS. It does not add the token; NewRequest does.
	Client *http.Client
}

// Start serves a simulator built from opts until the test ends, through
// kwatchtest: t.Cleanup stops it and waits for its goroutines. It fails
// the test at once if the server cannot start.
func Start(t testing.TB, opts sim.Options) *Harness {
	t.Helper()
	s, err := hook.Serve(context.Background(), opts, false)
	if err != nil {
		t.Fatalf("simkit: %v", err)
	}
	kit := s.(*kwatchtest.Server)
	h := &Harness{Kit: kit, Server: hook.Sim(kit), URL: kit.URL(), CACertPEM: kit.CACertPEM(), Token: opts.BearerToken}
	transport := &http.Transport{ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 64}
	if h.CACertPEM != nil {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(h.CACertPEM)
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	h.Client = &http.Client{Transport: transport}
	t.Cleanup(func() {
		transport.CloseIdleConnections()
		if err := kit.Close(); err != nil {
			t.Errorf("simkit: server shutdown: %v", err)
		}
	})
	return h
}

// NewRequest builds a request for path (with query) carrying the bearer token.
func (h *Harness) NewRequest(t testing.TB, method, path string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, h.URL+path, body)
	if err != nil {
		t.Fatalf("simkit: new request %s %s: %v", method, path, err)
	}
	if h.Token != "" {
		req.Header.Set("Authorization", "Bearer "+h.Token)
	}
	return req
}

// Kubeconfig returns the path of a kubeconfig for the server (written once,
// removed when the server stops); its current context's namespace is
// "default".
func (h *Harness) Kubeconfig(t testing.TB) string {
	t.Helper()
	return h.Kit.Kubeconfig()
}
