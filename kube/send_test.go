package kube

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// scripted answers requests in order and records when each arrived.
type scripted struct {
	mu      sync.Mutex
	answers []scriptedAnswer
	times   []time.Time
	methods []string
}

type scriptedAnswer struct {
	code       int
	retryAfter string
}

func (s *scripted) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
	}
	s.times = append(s.times, time.Now())
	s.methods = append(s.methods, req.Method)
	a := scriptedAnswer{code: 200}
	if len(s.answers) > 0 {
		a, s.answers = s.answers[0], s.answers[1:]
	}
	h := http.Header{"Content-Type": {"application/json"}}
	if a.retryAfter != "" {
		h.Set("Retry-After", a.retryAfter)
	}
	body := `{"kind":"ConfigMap"}`
	if a.code != 200 {
		body = `{"kind":"Status","code":0}`
	}
	return &http.Response{StatusCode: a.code, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

func (s *scripted) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.times)
}

func scriptedClient(t *testing.T, cfg Config, answers ...scriptedAnswer) (*Client, *scripted) {
	t.Helper()
	tr := &scripted{answers: answers}
	cfg.Host = "http://127.0.0.1:1"
	cfg.HTTP.Transport = tr
	c, err := NewClient(&cfg)
	require.NoError(t, err)
	return c, tr
}

func TestSendRepeatsOnlyRepeatableRequests(t *testing.T) {
	throttled := []scriptedAnswer{{code: 429, retryAfter: "2"}, {code: 503, retryAfter: "1"}, {code: 200}}
	tests := []struct {
		name     string
		req      Request
		attempts int
	}{
		{"a GET", Request{Path: "/api/v1/pods"}, 3},
		{"a guarded PUT", Request{Method: "PUT", Path: "/x", Body: []byte("{}"), ContentType: "application/json", Repeatable: true}, 3},
		{"a POST", Request{Method: "POST", Path: "/x", Body: []byte("{}"), ContentType: "application/json"}, 1},
		{"an unguarded PUT", Request{Method: "PUT", Path: "/x", Body: []byte("{}"), ContentType: "application/json"}, 1},
		{"a GET of a caller with its own policy", Request{Path: "/x", NoRetry: true}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, tr := scriptedClient(t, Config{RateLimit: RateLimitConfig{QPS: -1}}, throttled...)
				start := time.Now()
				resp, err := c.Send(t.Context(), tt.req)
				require.Equal(t, tt.attempts, tr.count())
				if tt.attempts == 1 {
					require.True(t, IsTooManyRequests(err), "%v", err)
					return
				}
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, start.Add(2*time.Second), tr.times[1], "the second try waits the 429's Retry-After")
				require.Equal(t, start.Add(3*time.Second), tr.times[2], "the third the 503's")
			})
		})
	}
}

func TestSendRetriesAtMostMaxRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, tr := scriptedClient(t, Config{RateLimit: RateLimitConfig{QPS: -1, MaxRetries: 2}},
			scriptedAnswer{code: 429}, scriptedAnswer{code: 429}, scriptedAnswer{code: 429}, scriptedAnswer{code: 429})
		start := time.Now()
		_, err := c.Send(t.Context(), Request{Path: "/x"})
		require.True(t, IsTooManyRequests(err), "%v", err)
		require.Equal(t, 3, tr.count(), "one try and two retries")
		require.Equal(t, start.Add(time.Second), tr.times[1], "a 429 naming no wait is retried after a second")
		var se *StatusError
		require.ErrorAs(t, err, &se)
		require.Equal(t, 3, se.Attempts)
		require.Contains(t, err.Error(), "the last of 3 attempts")
	})
}

// TestSendSaysAnEarlierAttemptMayBeDone: the error of a request retried
// after a 503 (which the server may have done all the same) says so, and
// is of unknown outcome for a write whatever the last answer; after a 429
// (not processed) the last answer is the outcome.
func TestSendSaysAnEarlierAttemptMayBeDone(t *testing.T) {
	for _, tt := range []struct {
		first   scriptedAnswer
		unknown bool
	}{{scriptedAnswer{code: 503, retryAfter: "1"}, true}, {scriptedAnswer{code: 429}, false}} {
		synctest.Test(t, func(t *testing.T) {
			c, tr := scriptedClient(t, Config{RateLimit: RateLimitConfig{QPS: -1}}, tt.first, scriptedAnswer{code: 404})
			_, err := c.Send(t.Context(), Request{Method: "DELETE", Path: "/x", Repeatable: true})
			require.Equal(t, 2, tr.count())
			var se *StatusError
			require.ErrorAs(t, err, &se)
			require.Equal(t, 404, int(se.Code))
			require.Equal(t, tt.unknown, se.EarlierOutcomeUnknown, "after a %d", tt.first.code)
			require.Equal(t, tt.unknown, AnswerOutcomeUnknown("DELETE", se))
		})
	}
}

func TestSendErrorOfOneAttemptCountsNone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := scriptedClient(t, Config{RateLimit: RateLimitConfig{QPS: -1}}, scriptedAnswer{code: 404})
		_, err := c.Send(t.Context(), Request{Path: "/x"})
		var se *StatusError
		require.ErrorAs(t, err, &se)
		require.Zero(t, se.Attempts)
		require.NotContains(t, err.Error(), "attempts")
	})
}

func TestSendDoesNotRetryA503WithoutRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, tr := scriptedClient(t, Config{RateLimit: RateLimitConfig{QPS: -1}}, scriptedAnswer{code: 503})
		_, err := c.Send(t.Context(), Request{Path: "/x"})
		require.Error(t, err)
		require.Equal(t, 1, tr.count())
	})
}

func TestSendStopsWaitingWhenTheContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, tr := scriptedClient(t, Config{RateLimit: RateLimitConfig{QPS: -1}}, scriptedAnswer{code: 429, retryAfter: "60"})
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		start := time.Now()
		_, err := c.Send(ctx, Request{Path: "/x"})
		require.True(t, IsTooManyRequests(err), "the server's answer is returned: %v", err)
		require.Equal(t, 1, tr.count())
		require.Equal(t, 5*time.Second, time.Since(start))
	})
}

func TestRateLimitIsSharedByEveryRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, tr := scriptedClient(t, Config{RateLimit: RateLimitConfig{QPS: 2, Burst: 3}})
		start := time.Now()
		for range 7 {
			resp, err := c.Send(t.Context(), Request{Path: "/x"})
			require.NoError(t, err)
			resp.Body.Close()
		}
		req, err := http.NewRequestWithContext(t.Context(), "GET", "/y", nil)
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 8, tr.count())
		// A burst of 3 at once, then one every 500 ms: Do waits like Send.
		for i, at := range tr.times {
			want := time.Duration(max(0, i-2)) * 500 * time.Millisecond
			require.Equal(t, start.Add(want), at, "request %d", i)
		}
	})
}

func TestRateLimitConfig(t *testing.T) {
	for _, tt := range []struct {
		qps   float32
		burst int
		ok    bool
	}{{0, 0, true}, {-1, 0, true}, {10, 5, true}, {5, -1, false}} {
		_, err := NewClient(&Config{Host: "http://127.0.0.1:1", RateLimit: RateLimitConfig{QPS: tt.qps, Burst: tt.burst}})
		require.Equal(t, tt.ok, err == nil, "QPS %v burst %d: %v", tt.qps, tt.burst, err)
	}
}

func TestIsWatchPath(t *testing.T) {
	for path, want := range map[string]bool{
		"/api/v1/watch/pods":              true,
		"/api/v1/watch/namespaces/x/pods": true,
		"/apis/apps/v1/watch/deployments": true,
		"/api/v1/pods":                    false,
		"/apis/apps/v1/deployments":       false,
		"/api/v1/namespaces/watch/pods":   false,
		"/apis/watch/v1/things":           false,
		"/api":                            false,
	} {
		require.Equal(t, want, isWatchPath(path), path)
	}
}
