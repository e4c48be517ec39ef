package kube

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// refusing is a write interceptor that refuses every write and counts
// what it saw.
type refusing struct {
	mu   sync.Mutex
	seen []string
}

func (f *refusing) intercept(req *http.Request, _ func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	f.mu.Lock()
	f.seen = append(f.seen, req.Method)
	f.mu.Unlock()
	return nil, &FencedError{Method: req.Method, Path: req.URL.Path, Reason: "test"}
}

// A write whose query or path looks like a watch is still a write: the
// API server ignores the watch parameter on a PUT, PATCH, POST or
// DELETE and applies it. It must pass the interceptor (the manager's
// fence) like any other; only the choice of http.Client (no timeout)
// follows the watch test.
func TestWriteInterceptorSeesWritesThatLookLikeWatches(t *testing.T) {
	c, tr := scriptedClient(t, Config{RateLimit: RateLimitConfig{QPS: -1}})
	f := &refusing{}
	fc := c.WithWriteInterceptor(f.intercept)
	watchQuery := url.Values{"watch": {"true"}}

	_, err := fc.Send(t.Context(), Request{Method: http.MethodPut, Path: "/api/v1/namespaces/demo/configmaps/cm",
		Query: watchQuery, Body: []byte("{}"), ContentType: ContentTypeJSON})
	require.True(t, IsFenced(err), "Send of a PUT with watch=true: %v", err)

	req, err := http.NewRequest(http.MethodDelete, "/api/v1/namespaces/demo/configmaps/cm?watch=1", nil)
	require.NoError(t, err)
	_, err = fc.Do(req)
	require.True(t, IsFenced(err), "Do of a DELETE with watch=1: %v", err)

	req, err = http.NewRequest(http.MethodPatch, "/api/v1/watch/namespaces/demo/configmaps/cm",
		strings.NewReader("{}"))
	require.NoError(t, err)
	_, err = fc.Do(req)
	require.True(t, IsFenced(err), "Do of a PATCH on a /watch/ path: %v", err)

	require.Equal(t, 0, tr.count(), "no refused write reached the transport")
	require.Equal(t, []string{"PUT", "DELETE", "PATCH"}, f.seen)

	// A watch (a GET) is not a write: it goes straight through.
	resp, err := fc.Send(t.Context(), Request{Path: "/api/v1/configmaps", Query: watchQuery})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 1, tr.count())
}

// Each attempt of a write that Send repeats after a 429 passes the
// interceptor again, after the rate limit: a fence that closed during
// the Retry-After wait refuses the retry.
func TestWriteInterceptorSeesEveryAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, tr := scriptedClient(t, Config{RateLimit: RateLimitConfig{QPS: -1}}, scriptedAnswer{code: 429, retryAfter: "1"})
		var mu sync.Mutex
		open := true
		calls := 0
		fc := c.WithWriteInterceptor(func(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			mu.Lock()
			calls++
			ok := open
			open = false // the fence closes after the first attempt
			mu.Unlock()
			if !ok {
				return nil, &FencedError{Method: req.Method, Path: req.URL.Path, Reason: "test"}
			}
			return send(req)
		})
		_, err := fc.Send(t.Context(), Request{Method: http.MethodPut, Path: "/x", Body: []byte("{}"),
			ContentType: ContentTypeJSON, Repeatable: true})
		require.True(t, IsFenced(err), "the retry after the 429 is refused: %v", err)
		require.Equal(t, 2, calls)
		require.Equal(t, 1, tr.count(), "only the first attempt was sent")
	})
}
