package kube

import (
	"errors"
	"fmt"
	"net/http"
)

// WriteInterceptor sends one write of a Client made by
// WithWriteInterceptor: every request whose method is not GET or HEAD,
// through Send and Do alike, one whose query or path looks like a watch
// included (the server applies such a write; a watch is a GET, so never
// intercepted). It is called once per attempt, after the client's rate
// limit, immediately before the request leaves, so what it decides
// holds at the instant of sending rather than when a caller queued the
// write. A resend inside the transport (after a 401 with refreshed
// credentials, or a followed redirect) is not an attempt of its own: it
// carries the context the interceptor sent with. It may refuse the
// request by returning an error without calling send (a *FencedError,
// so callers can tell with IsFenced), send it with a narrower context
// (req.WithContext), or look at the answer. It must call send at most
// once.
type WriteInterceptor func(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error)

// WithWriteInterceptor returns a client that sends its writes through w
// and is otherwise c: the same transport, credentials, rate limit (one
// token bucket for both) and discovery cache. c itself is unchanged. An
// interceptor already on c runs inside w (w sees the request first).
func (c *Client) WithWriteInterceptor(w WriteInterceptor) *Client {
	cp := *c
	if inner := c.writes; inner != nil {
		cp.writes = func(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			return w(req, func(r *http.Request) (*http.Response, error) { return inner(r, send) })
		}
	} else {
		cp.writes = w
	}
	return &cp
}

// do sends req on hc, through the write interceptor when req is a write.
func (c *Client) do(hc *http.Client, req *http.Request) (*http.Response, error) {
	if c.writes == nil || req.Method == http.MethodGet || req.Method == http.MethodHead {
		return hc.Do(req)
	}
	return c.writes(req, hc.Do)
}

// ErrFenced is what every write refused by a fence matches (errors.Is):
// the replica that made it no longer holds the Lease, or the key, that
// allowed it to act. IsFenced is the predicate.
var ErrFenced = errors.New("fenced")

// FencedError is a write refused before it was sent, because the
// replica that made it may not act any more (package controller's
// write fence). Nothing reached the server: retrying on this replica
// cannot help until it leads (or owns the key) again.
type FencedError struct {
	Method, Path string
	// Reason says which right ended: "not leading", "key not owned", ...
	Reason string
}

func (e *FencedError) Error() string {
	return fmt.Sprintf("kube: %s %s refused before it was sent (fenced): %s", e.Method, e.Path, e.Reason)
}

// Is makes errors.Is(err, ErrFenced) true.
func (e *FencedError) Is(target error) bool { return target == ErrFenced }

// IsFenced reports whether err is, or wraps, a write refused by a fence
// (ErrFenced).
func IsFenced(err error) bool { return errors.Is(err, ErrFenced) }
