package kube

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/kwatch/kwatch/internal/ratelimit"
)

// Client-side rate limit defaults: a token bucket shared by every request
// of one Client (lists, watch opens, discovery, writes). They sit between
// client-go's library defaults (5 and 10, which throttle any controller
// that writes) and kubectl's (50 and 300).
const (
	DefaultQPS   = 50
	DefaultBurst = 100
	// DefaultMaxRetries is how often a repeatable request answered 429 (or
	// 503 with Retry-After) is sent again.
	DefaultMaxRetries = 5
)

// limiter is the client's token bucket; nil means no limit.
type limiter struct{ rl *ratelimit.Bucket }

// newLimiter reads Config.RateLimit.QPS and Burst: zero means the default,
// a negative QPS turns the limit off.
func newLimiter(qps float32, burst int) (*limiter, error) {
	switch {
	case qps < 0:
		return &limiter{}, nil
	case math.IsNaN(float64(qps)) || math.IsInf(float64(qps), 0):
		return nil, fmt.Errorf("kube: Config.RateLimit.QPS %v is not a number of requests per second", qps)
	case burst < 0:
		return nil, fmt.Errorf("kube: Config.RateLimit.Burst %d is negative", burst)
	}
	if qps == 0 {
		qps = DefaultQPS
	}
	if burst == 0 {
		burst = max(DefaultBurst, int(math.Ceil(float64(qps))))
	}
	return &limiter{rl: ratelimit.New(float64(qps), burst)}, nil
}

// wait blocks until the bucket has a token or ctx ends.
func (l *limiter) wait(ctx context.Context) error {
	if err := l.rl.Wait(ctx, 1); err != nil { // a nil bucket: no limit
		return fmt.Errorf("client-side rate limit: %w", err)
	}
	return nil
}

// pause waits d, the server's answer to a throttled request, or until ctx
// ends.
func (l *limiter) pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// maxRetries reads Config.RateLimit.MaxRetries: zero means the default,
// negative none.
func maxRetries(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultMaxRetries, nil
	case n < 0:
		return 0, nil
	}
	return n, nil
}

// throttled reports whether an answer is the server's flow control, after
// which the same request may be sent again: 429, or 503 naming when.
func throttled(se *StatusError) bool {
	return se.Code == http.StatusTooManyRequests || (se.Code == http.StatusServiceUnavailable && se.RetryAfter > 0)
}

// retryDelay is how long to wait before sending a throttled request again.
func retryDelay(se *StatusError) time.Duration {
	if se.RetryAfter > 0 {
		return se.RetryAfter
	}
	return time.Second
}
