package harness

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
)

func TestResourceOf(t *testing.T) {
	for path, want := range map[string]struct {
		res   string
		watch bool
	}{
		"/api/v1/pods?watch=1":                           {"pods", true},
		"/api/v1/namespaces/ns/pods?watch=true":          {"pods", true},
		"/api/v1/namespaces/ns/pods/p":                   {"pods", false},
		"/apis/apps/v1/namespaces/ns/deployments?watch=": {"deployments.apps", true},
		"/apis/apps/v1/watch/namespaces/ns/deployments":  {"deployments.apps", true},
		"/api/v1/namespaces/ns/configmaps?watch=false":   {"configmaps", false},
		"/version": {"", false},
	} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		res, w := resourceOf(r)
		require.Equal(t, want.res, res, path)
		require.Equal(t, want.watch, w, path)
	}
}

// A lagged watch's lines reach the client at least the lag after the
// server wrote them, in order; a list and other resources pass at once.
// Only lower bounds on time are asserted.
func TestLagProxyHoldsWatchBytes(t *testing.T) {
	const lag = 300 * time.Millisecond
	wrote := make(chan time.Time, 3)
	start := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "" {
			fmt.Fprint(w, `{"kind":"PodList"}`)
			return
		}
		w.(http.Flusher).Flush() // headers first, as the API server does
		<-start                  // the client has its headers: the proxy sent them at once
		for i := range 3 {
			wrote <- time.Now()
			fmt.Fprintf(w, "{\"n\":%d}\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond)
		}
	}))
	defer up.Close()
	p, err := NewLagProxy(&kube.Config{Host: up.URL})
	require.NoError(t, err)
	require.NoError(t, p.SetLag("pods", lag))
	require.Error(t, p.SetLag("pods", -1))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	resp, err := http.Get(p.URL + "/api/v1/namespaces/ns/pods")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, `{"kind":"PodList"}`, string(b))

	resp, err = http.Get(p.URL + "/api/v1/namespaces/ns/pods?watch=1")
	require.NoError(t, err)
	defer resp.Body.Close()
	close(start)
	lines := bufio.NewScanner(resp.Body)
	for i := range 3 {
		require.True(t, lines.Scan())
		require.Equal(t, fmt.Sprintf(`{"n":%d}`, i), lines.Text())
		require.GreaterOrEqual(t, time.Since(<-wrote), lag, "line %d came early", i)
	}
}

// Refuse answers 500 to what it picks, which never reaches the server;
// OnForwarded is told of what does, with the server's status.
func TestLagProxyRefusesAndRecords(t *testing.T) {
	reached := make(chan string, 4)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- r.Method + " " + r.URL.Path
		w.WriteHeader(http.StatusCreated)
	}))
	defer up.Close()
	p, err := NewLagProxy(&kube.Config{Host: up.URL})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()
	forwarded := make(chan string, 4)
	p.OnForwarded(func(r *http.Request, code int) { forwarded <- fmt.Sprintf("%s %s %d", r.Method, r.URL.Path, code) })
	p.Refuse(func(r *http.Request) bool { return r.Method == http.MethodPut })

	send := func(method, path string) int {
		req, err := http.NewRequest(method, p.URL+path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusInternalServerError, send(http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l"))
	require.Equal(t, http.StatusCreated, send(http.MethodPost, "/api/v1/namespaces/ns/configmaps"))
	require.Equal(t, "POST /api/v1/namespaces/ns/configmaps", <-reached, "the refused PUT never reached the server")
	require.Equal(t, "POST /api/v1/namespaces/ns/configmaps 201", <-forwarded)
	p.Refuse(nil)
	require.Equal(t, http.StatusCreated, send(http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l"))
	require.Equal(t, "PUT /apis/coordination.k8s.io/v1/namespaces/ns/leases/l", <-reached)
}

// Drop ends the watches open now without what their delay line holds;
// a watch made afterwards passes as before.
func TestLagProxyDropEndsTheWatches(t *testing.T) {
	p := heldLineProxy(t)

	p.Drop("pods") // no watch open: nothing to end
	resp, err := http.Get(p.URL + "/api/v1/namespaces/ns/pods?watch=1")
	require.NoError(t, err)
	defer resp.Body.Close()
	ended := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(resp.Body)
		ended <- b
	}()
	// The proxy holds the line for an hour; the watch is open once the
	// headers are back, and a Drop ends it.
	p.Drop("pods")
	require.Empty(t, <-ended, "the held line is discarded")

	require.NoError(t, p.SetLag("pods", 0))
	resp2, err := http.Get(p.URL + "/api/v1/namespaces/ns/pods?watch=1")
	require.NoError(t, err)
	defer resp2.Body.Close()
	lines := bufio.NewScanner(resp2.Body)
	require.True(t, lines.Scan())
	require.Equal(t, `{"n":0}`, lines.Text())
}

// SetLag applies to the chunks held now: ending the lag passes them on.
func TestLagProxySetLagReleasesWhatItHolds(t *testing.T) {
	p := heldLineProxy(t)

	resp, err := http.Get(p.URL + "/api/v1/namespaces/ns/pods?watch=1")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.NoError(t, p.SetLag("pods", 0))
	lines := bufio.NewScanner(resp.Body)
	require.True(t, lines.Scan(), "the held line comes once the lag ends")
	require.Equal(t, `{"n":0}`, lines.Text())
}

// heldLineProxy is a LagProxy holding pods' watches for an hour, in front
// of a server whose watches send one line and stay open; both stop with
// the test.
func heldLineProxy(t *testing.T) *LagProxy {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "{\"n\":0}\n")
		w.(http.Flusher).Flush()
		select { // an open watch, as the server keeps it
		case <-release:
		case <-r.Context().Done():
		}
	}))
	p, err := NewLagProxy(&kube.Config{Host: up.URL})
	require.NoError(t, err)
	require.NoError(t, p.SetLag("pods", time.Hour))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		close(release)
		up.Close()
	})
	return p
}
