package kwatchtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
)

// A lagged watch delivers each event at least the delay after it was
// written, in order; after Stop events flow again. Only lower bounds on
// time are asserted: a loaded machine can make events later, never
// earlier.
func TestLagWatch(t *testing.T) {
	const delay = 300 * time.Millisecond
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	lag := srv.LagWatch(kwatchtest.LagOptions{Resource: "pods", Delay: delay})
	c, err := kube.NewClient(srv.Config())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		srv.URL()+"/api/v1/namespaces/default/pods?watch=1&resourceVersion="+srv.ResourceVersion(), nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(nil, 1<<20)
	next := func() string {
		require.True(t, lines.Scan(), "watch ended: %v", lines.Err())
		var ev struct {
			Object struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"object"`
		}
		require.NoError(t, json.Unmarshal(lines.Bytes(), &ev))
		return ev.Object.Metadata.Name
	}

	written := time.Now()
	for _, name := range []string{"a", "b", "c"} {
		_, err := srv.PutPod(kwatchtest.Pod{Namespace: "default", Name: name})
		require.NoError(t, err)
	}
	list, err := srv.List("pods", "default")
	require.NoError(t, err)
	require.Len(t, list, 3, "the list is not delayed")
	for _, want := range []string{"a", "b", "c"} {
		require.Equal(t, want, next())
		require.GreaterOrEqual(t, time.Since(written), delay, "%s arrived early", want)
	}
	lag.Stop()
	lag.Stop()
	_, err = srv.PutPod(kwatchtest.Pod{Namespace: "default", Name: "d"})
	require.NoError(t, err)
	require.Equal(t, "d", next())
}
