package watch

import (
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/kube"
)

// TestTimeoutDoesNotBoundWatches: Config.HTTP.Timeout bounds list pages and
// discovery, not a watch, which may be healthy for hours. The watch here
// receives a bookmark every second for 10 s with a Timeout of 1 s, and ends
// only when the server ends it (timeoutSeconds).
func TestTimeoutDoesNotBoundWatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, cfg := startPipeSim(t, sim.Options{BookmarkInterval: time.Second, DeadlineBookmarkLead: -1})
		_, err := srv.PutPod(sim.Pod{Namespace: "demo", Name: "web"})
		require.NoError(t, err)
		cfg.HTTP.Timeout = time.Second
		c, err := kube.NewClient(cfg)
		require.NoError(t, err)

		page, err := List[*testPod](t.Context(), c, kube.Pods, kube.Scope{Namespace: "demo"}, ListOptions{})
		require.NoError(t, err)
		start := time.Now()
		st, err := Watch[*testPod](t.Context(), c, kube.Pods, kube.Scope{Namespace: "demo"}, WatchOptions{
			ResourceVersion: page.ResourceVersion, AllowBookmarks: true, TimeoutSeconds: 10,
			IdleTimeout: 3 * time.Second,
		})
		require.NoError(t, err)
		defer st.Close()
		bookmarks := 0
		for {
			ev, err := st.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "after %v and %d bookmarks", time.Since(start), bookmarks)
			require.Equal(t, Bookmark, ev.Type)
			bookmarks++
		}
		require.Equal(t, 10*time.Second, time.Since(start), "the server's timeoutSeconds ends the watch")
		require.GreaterOrEqual(t, bookmarks, 9)

		// A watch sent by hand through Do is a watch too.
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet,
			"/api/v1/namespaces/demo/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds=5&resourceVersion="+page.ResourceVersion, nil)
		require.NoError(t, err)
		start = time.Now()
		resp, err := c.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		require.Equal(t, 5*time.Second, time.Since(start))
	})
}

// stallHandler answers nothing until the request is cancelled.
func stallHandler(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// TestTimeoutBoundsNonWatchRequests: list pages, discovery and requests sent
// with Do fail after Config.HTTP.Timeout when the server does not answer.
func TestTimeoutBoundsNonWatchRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := startPipeHandler(t, http.HandlerFunc(stallHandler))
		cfg.HTTP.Timeout = time.Second
		c, err := kube.NewClient(cfg)
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "/api/v1/pods", nil)
		require.NoError(t, err)
		calls := []struct {
			name string
			call func() error
		}{
			{"list", func() error {
				_, err := List[*testPod](t.Context(), c, kube.Pods, kube.Scope{}, ListOptions{})
				return err
			}},
			{"discovery", func() error { _, err := c.Discover(t.Context()); return err }},
			{"Do", func() error { _, err := c.Do(req); return err }},
		}
		for _, tc := range calls {
			start := time.Now()
			err := tc.call()
			require.Error(t, err, tc.name)
			require.Equal(t, time.Second, time.Since(start), "%s: %v", tc.name, err)
		}
	})
}

// TestTimeoutBoundsAListBody: the bound covers reading a list's body, not
// only its headers, as http.Client.Timeout does.
func TestTimeoutBoundsAListBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := startPipeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[`)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		cfg.HTTP.Timeout = time.Second
		c, err := kube.NewClient(cfg)
		require.NoError(t, err)
		start := time.Now()
		_, err = List[*testPod](t.Context(), c, kube.Pods, kube.Scope{}, ListOptions{})
		require.Error(t, err)
		require.Equal(t, time.Second, time.Since(start), "got %v", err)
	})
}
