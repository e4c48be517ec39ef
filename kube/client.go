package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Client talks to one API server: its transport, credentials, rate limit
// and discovery cache. Build it with NewClient; it is safe for concurrent
// use and holds no goroutines of its own, so it needs no Close. The watch
// package lists and watches through it, the client package writes.
type Client struct {
	base *url.URL
	// hc sends every request that is not a watch; its Timeout is
	// Config.HTTP.Timeout. stream sends watches over the same transport with no
	// Timeout: http.Client.Timeout covers reading the whole body, and a
	// healthy watch's body never ends. A watch has its idle deadline and the
	// caller's context instead.
	hc          *http.Client
	stream      *http.Client
	ns          string
	contentType string // Config.Encoding.ContentType
	noIntern    bool   // Config.Encoding.NoProtobufIntern
	limit       *limiter
	retries     int // Config.RateLimit.MaxRetries, resolved
	// writes, when set, sends every write (write.go); nil sends them as
	// they are. Set only by WithWriteInterceptor, on a copy.
	writes WriteInterceptor
	// recorder, when set, learns of every accepted write (recorder.go).
	// Set only by WithWriteRecorder, on a copy.
	recorder WriteRecorder
	// disc is the discovery cache, shared with the copies
	// WithWriteInterceptor makes.
	disc *discoveryCache
}

type discoveryCache struct {
	mu        sync.Mutex
	resources []Resource // nil until the first Discover; guarded by mu
}

// NewClient checks cfg and builds the client's transport. It does not
// contact the server.
func NewClient(cfg *Config) (*Client, error) {
	if cfg == nil {
		return nil, errors.New("kube: nil Config")
	}
	base, err := parseHost(cfg.Host)
	if err != nil {
		return nil, err
	}
	if err := checkContentType(cfg.Encoding.ContentType); err != nil {
		return nil, err
	}
	lim, err := newLimiter(cfg.RateLimit.QPS, cfg.RateLimit.Burst)
	if err != nil {
		return nil, err
	}
	retries, err := maxRetries(cfg.RateLimit.MaxRetries)
	if err != nil {
		return nil, err
	}
	normalized := *cfg
	normalized.Host = base.String()
	rt, err := normalized.RoundTripper()
	if err != nil {
		return nil, err
	}
	ns := cfg.Namespace
	if ns == "" {
		ns = "default"
	}
	return &Client{base: base, ns: ns, limit: lim, retries: retries, disc: &discoveryCache{},
		hc:          &http.Client{Transport: rt, Timeout: cfg.HTTP.Timeout},
		stream:      &http.Client{Transport: rt},
		contentType: cfg.Encoding.ContentType, noIntern: cfg.Encoding.NoProtobufIntern}, nil
}

func parseHost(host string) (*url.URL, error) {
	u, err := parseServer(host)
	if err != nil {
		return nil, fmt.Errorf("kube: Config.Host %w", err)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return u, nil
}

// Host is the server's base URL.
func (c *Client) Host() string { return c.base.String() }

// Namespace is the configured default namespace ("default" when unset).
func (c *Client) Namespace() string { return c.ns }

// ContentType is Config.Encoding.ContentType: "" (protobuf for types that decode
// it), ContentTypeJSON or ContentTypeProtobuf.
func (c *Client) ContentType() string { return c.contentType }

// InternProtobuf reports whether objects decoded from protobuf should have
// their strings interned (Config.Encoding.NoProtobufIntern unset).
func (c *Client) InternProtobuf() bool { return !c.noIntern }

// CloseIdleConnections closes the client's idle keep-alive connections.
// Both of its http.Clients share one transport.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// Do sends a request built by the caller, with the client's transport,
// credentials and rate limit. A relative URL is resolved against the
// server's base URL. Non-2xx answers are not turned into errors: the
// caller owns the response (ErrorFromResponse turns one into a
// *StatusError). Nothing is retried. Config.HTTP.Timeout bounds the
// request, body included, unless it is a watch: its query has a watch
// parameter that the server reads as true (present and neither "false" nor
// "0"), or its path has the deprecated /watch/ segment after the group
// version.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	if !req.URL.IsAbs() {
		req.URL = c.base.ResolveReference(&url.URL{Path: c.base.Path + req.URL.Path, RawQuery: req.URL.RawQuery})
	}
	if err := c.limit.wait(req.Context()); err != nil {
		return nil, err
	}
	if isWatchQuery(req.URL.Query()) || isWatchPath(strings.TrimPrefix(req.URL.Path, c.base.Path)) {
		return c.do(c.stream, req) // a write that looks like a watch is still a write
	}
	return c.do(c.hc, req)
}

// isWatchQuery reads the watch parameter as the API server does
// (runtime.Convert_Slice_string_To_bool): absent, "0" and "false" in any
// case are false; any other value, the empty string included, is true.
func isWatchQuery(q url.Values) bool {
	v, ok := q["watch"]
	if !ok || len(v) == 0 {
		return false
	}
	return v[0] != "0" && !strings.EqualFold(v[0], "false")
}

// isWatchPath reports whether path uses the deprecated watch prefix:
// /api/v1/watch/... or /apis/GROUP/VERSION/watch/...
func isWatchPath(path string) bool {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		return parts[2] == "watch"
	case len(parts) >= 4 && parts[0] == "apis":
		return parts[3] == "watch"
	}
	return false
}

// Request is one call to the API server, for Send.
type Request struct {
	Method      string     // GET when empty
	Path        string     // from the server's root: "/api/v1/namespaces/default/pods/web"
	Query       url.Values // may be nil
	Accept      string     // "application/json" when empty
	ContentType string     // of Body; required when Body is set
	Body        []byte
	// Repeatable says sending the request twice is harmless: a write guarded
	// by a resourceVersion or UID precondition, or a server-side apply. GETs
	// are always repeatable. Only repeatable requests are sent again after a
	// 429 or 503 answer; a POST is never silently sent twice.
	Repeatable bool
	// NoRetry sends the request once whatever the answer, for callers with
	// a retry policy of their own (the informer's backoff).
	NoRetry bool
}

// Send sends r and returns the response of a 2xx answer; the caller closes
// its body. A non-2xx answer is read (boundedly), closed and returned as a
// *StatusError. A repeatable request answered 429 or 503 is sent again
// after the server's Retry-After (one second when it names none), at most
// Config.RateLimit.MaxRetries times, while ctx lasts; the error of a
// request sent more than once says how many times (StatusError.Attempts).
// A retry that fails to be sent at all (no connection, refused by a
// WriteInterceptor) returns an error wrapping both the last answer and
// that failure. Every attempt waits for the client's rate limit.
func (c *Client) Send(ctx context.Context, r Request) (*http.Response, error) {
	if r.Method == "" {
		r.Method = http.MethodGet
	}
	if r.Body != nil && r.ContentType == "" {
		return nil, errors.New("kube: Request.ContentType is empty for a request with a body")
	}
	repeatable := !r.NoRetry && (r.Repeatable || r.Method == http.MethodGet || r.Method == http.MethodHead)
	earlierUnknown := false
	var last *StatusError // the answer of the attempt before this one, if retried
	for attempt := 0; ; attempt++ {
		resp, err := c.send(ctx, &r)
		if err != nil {
			if last != nil {
				// The server answered an earlier attempt: that answer
				// (kube.AsStatus finds it) says what may have been done.
				return nil, fmt.Errorf("%w; sending it again: %w", last, err)
			}
			return nil, err
		}
		if resp.StatusCode/100 == 2 {
			return resp, nil
		}
		se := readStatus(resp)
		if attempt > 0 {
			se.Attempts, se.EarlierOutcomeUnknown = attempt+1, earlierUnknown
		}
		if !repeatable || attempt >= c.retries || !throttled(se) {
			return nil, se
		}
		earlierUnknown = earlierUnknown || OutcomeUnknown(int(se.Code))
		last = se
		if err := c.limit.pause(ctx, retryDelay(se)); err != nil {
			return nil, se
		}
	}
}

func (c *Client) send(ctx context.Context, r *Request) (*http.Response, error) {
	u := *c.base
	u.Path = c.base.Path + r.Path
	u.RawQuery = r.Query.Encode()
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), body)
	if err != nil {
		return nil, err
	}
	accept := r.Accept
	if accept == "" {
		accept = ContentTypeJSON
	}
	req.Header.Set("Accept", accept)
	if r.Body != nil {
		req.Header.Set("Content-Type", r.ContentType)
	}
	if err := c.limit.wait(ctx); err != nil {
		return nil, err
	}
	if isWatchQuery(r.Query) {
		return c.do(c.stream, req)
	}
	return c.do(c.hc, req)
}

// readStatus reads a bounded part of an error answer and closes it.
func readStatus(resp *http.Response) *StatusError {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return statusFromResponse(resp.StatusCode, resp.Header, body)
}

// ErrorFromResponse returns nil for a 2xx response and otherwise reads a
// bounded part of the body, closes it and returns the answer as a
// *StatusError (a body that is not a Status still yields one, with the
// HTTP code and the start of the body).
func ErrorFromResponse(resp *http.Response) error {
	if resp.StatusCode/100 == 2 {
		return nil
	}
	return readStatus(resp)
}
