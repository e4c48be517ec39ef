package controller_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/webhook"
)

// TestManagerRunsTheWebhookServer: the manager serves the webhooks while
// it runs, /readyz waits for them, and Run stops the server.
func TestManagerRunsTheWebhookServer(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	c, err := kube.NewClient(srv.Config())
	require.NoError(t, err)
	wh, err := webhook.New(webhook.Options{Addr: "127.0.0.1:0", SelfSigned: &webhook.SelfSigned{}, Logger: quiet()})
	require.NoError(t, err)
	require.NoError(t, wh.Admission("/allow", webhook.HandlerFunc(func(context.Context, *webhook.AdmissionRequest) webhook.AdmissionResponse {
		return webhook.Allowed()
	})))
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet(), Webhook: wh})
	require.NoError(t, err)
	probes := httptest.NewServer(m.Handler())
	defer probes.Close()
	readyz := func() (int, string) {
		resp, err := http.Get(probes.URL + "/readyz")
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := readyz()
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Contains(t, body, `"name":"webhook server"`)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	<-wh.Ready()
	code, body = readyz()
	require.Equal(t, http.StatusOK, code, body)

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(wh.CACertPEM())
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	defer hc.CloseIdleConnections()
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE"}}`
	resp, err := hc.Post("https://"+wh.Addr().String()+"/allow", "application/json", strings.NewReader(review))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(b), `"allowed":true`)

	cancel()
	require.NoError(t, <-done)
	require.False(t, wh.Serving(), "Run stopped the webhook server")
}

// TestManagerStopsWhenTheWebhookServerFails: a webhook server that cannot
// serve (no certificate) ends Run with its error.
func TestManagerStopsWhenTheWebhookServerFails(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	c, err := kube.NewClient(srv.Config())
	require.NoError(t, err)
	wh, err := webhook.New(webhook.Options{Addr: "127.0.0.1:0", CertDir: t.TempDir(), Logger: quiet()})
	require.NoError(t, err)
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet(), Webhook: wh})
	require.NoError(t, err)
	err = m.Run(context.Background())
	require.ErrorContains(t, err, "serving certificate")
}
