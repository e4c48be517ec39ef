package kwatchtest_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kwatchtest"
)

// TestServeStopsWithItsContext serves outside a test's cleanup: the server
// answers until its context ends, and Close then returns (every goroutine
// has ended) with the same result each time.
func TestServeStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	srv, err := kwatchtest.Serve(ctx, kwatchtest.Options{})
	require.NoError(t, err)
	resp, err := http.Get(srv.URL() + "/version")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	cancel()
	require.NoError(t, srv.Close())
	require.NoError(t, srv.Close(), "a second Close")
	_, err = http.Get(srv.URL() + "/version")
	require.Error(t, err, "the listener is closed once Close returned")
}

// TestChurn loads pods, makes a fixed number of changes and returns; the
// pods it made are on the server, spread over the namespaces asked for.
func TestChurn(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	require.NoError(t, srv.Churn(t.Context(), kwatchtest.ChurnOptions{Pods: 6, Namespaces: 2, Events: 30}))
	pods, err := srv.List("pods", "")
	require.NoError(t, err)
	require.NotEmpty(t, pods)
	namespaces := map[string]bool{}
	for _, p := range pods {
		namespaces[p.Namespace] = true
	}
	require.Equal(t, map[string]bool{"ns-000": true, "ns-001": true}, namespaces)

	err = srv.Churn(t.Context(), kwatchtest.ChurnOptions{Rate: -1})
	require.ErrorContains(t, err, "Rate")
}
