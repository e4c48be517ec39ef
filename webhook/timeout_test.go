package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/testutil"
)

// slowServer runs a Server over an in-memory network, TLS included, with a
// handler at /slow that ignores its context until release is closed. It
// returns a client of the server, Run's cancel and Run's result.
func slowServer(t *testing.T, opts Options, release <-chan struct{}, returned chan<- struct{}) (*http.Client, context.CancelFunc, <-chan error) {
	t.Helper()
	var mn testutil.MemNet
	ln, err := mn.Listen("webhook:443")
	require.NoError(t, err)
	opts.Listener = ln
	s := newTestServer(t, opts)
	require.NoError(t, s.Admission("/slow", HandlerFunc(func(context.Context, *AdmissionRequest) AdmissionResponse {
		defer close(returned)
		<-release
		return Allowed()
	})))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	<-s.Ready()
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(s.CACertPEM()))
	tr := mn.Transport()
	tr.TLSClientConfig = &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}, cancel, done
}

func postSlow(t *testing.T, c *http.Client) *AdmissionReview {
	t.Helper()
	resp, err := c.Post("https://webhook:443/slow", "application/json", bytesReader(admissionBody(t, Create, widget{}, nil)))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	var rv AdmissionReview
	require.NoError(t, json.Unmarshal(b, &rv), "%s", b)
	require.NotNil(t, rv.Response, "%s", b)
	return &rv
}

// TestTimeoutAnswersOverTheWire: over TLS, the client gets the denial at
// RequestTimeout while the handler still runs (net/http sends an answer
// only once ServeHTTP returns, so ServeHTTP must not wait for the
// handler), and Run, told to stop, waits for the handler before it
// returns.
func TestTimeoutAnswersOverTheWire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release, returned := make(chan struct{}), make(chan struct{})
		c, cancel, done := slowServer(t, Options{RequestTimeout: 2 * time.Second}, release, returned)
		start := time.Now()
		rv := postSlow(t, c)
		require.Equal(t, 2*time.Second, time.Since(start), "answered at RequestTimeout")
		require.False(t, rv.Response.Allowed)
		require.Contains(t, rv.Response.Result.Message, "the handler gave no answer in time")

		c.CloseIdleConnections()
		cancel()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Run returned (%v) while a handler still ran", err)
		case <-returned:
			t.Fatal("the handler returned before it was released")
		default:
		}
		close(release)
		<-returned
		require.NoError(t, <-done)
	})
}

// TestHandlerPastShutdownTimeoutIsAnError: a handler that ignores its
// context past ShutdownTimeout cannot be stopped; Run returns then, with
// an error that says so.
func TestHandlerPastShutdownTimeoutIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release, returned := make(chan struct{}), make(chan struct{})
		c, cancel, done := slowServer(t, Options{RequestTimeout: time.Second}, release, returned)
		postSlow(t, c)
		c.CloseIdleConnections()
		start := time.Now()
		cancel()
		err := <-done
		require.Equal(t, DefaultShutdownTimeout, time.Since(start))
		require.ErrorContains(t, err, "still running after ShutdownTimeout")
		close(release)
		<-returned
		synctest.Wait() // Run's waiter ends with the handler
	})
}
