package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kwatch/kwatch/kube"
)

// Log levels of -v, kubectl's numbers where kubectl has them.
const (
	verboseInfo     = 2 // the informer's lists, watches and relists
	verboseDebug    = 4 // its retries, reconnects and refusals in detail
	verboseRequests = 6 // one line per request: GET URL 200 OK in 3 milliseconds
	verboseHeaders  = 7 // the request's headers too, credentials redacted
)

// logLevel maps -v to the informer logger's level: errors only (failures
// the command cannot report itself) at 0 and 1.
func logLevel(v int) slog.Level {
	switch {
	case v >= verboseDebug:
		return slog.LevelDebug
	case v >= verboseInfo:
		return slog.LevelInfo
	}
	return slog.LevelError
}

// withTimeout is context.WithTimeout, where 0 means no bound
// (--request-timeout 0, as kubectl reads it).
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// newClient builds the client of cfg with the command line's request
// timeout and, from -v=6, a line on stderr for every request.
func newClient(cfg *kube.Config, e *env, o *getOptions) (*kube.Client, error) {
	if o.requestTimeoutSet && o.requestTimeout > 0 {
		cfg.HTTP.Timeout = o.requestTimeout // kubectl's meaning: each request
	}
	if o.verbosity >= verboseRequests {
		logged, err := loggingConfig(cfg, e.stderr, o.verbosity >= verboseHeaders)
		if err != nil {
			return nil, explainConfig(err, o.conn)
		}
		cfg = logged
	}
	c, err := kube.NewClient(cfg)
	if err != nil {
		return nil, explainConfig(err, o.conn)
	}
	return c, nil
}

// loggingConfig returns a copy of cfg whose transport is cfg's own
// (credentials included) behind a logger. The copy carries no
// credentials of its own, so they are attached once.
func loggingConfig(cfg *kube.Config, w io.Writer, headers bool) (*kube.Config, error) {
	rt, err := cfg.RoundTripper()
	if err != nil {
		return nil, err
	}
	c := *cfg
	c.Auth = kube.AuthConfig{} // rt attaches them
	c.HTTP.Transport = &requestLogger{base: rt, w: w, headers: headers, now: time.Now}
	return &c, nil
}

// requestLogger writes one line per request, as kubectl -v=6 says it:
// "GET https://host/api/v1/pods?limit=500 200 OK in 3 milliseconds".
// It never prints a credential: with headers on, Authorization and
// other secrets are redacted.
type requestLogger struct {
	base    http.RoundTripper
	w       io.Writer
	headers bool
	now     func() time.Time

	mu sync.Mutex // one line at a time
}

func (l *requestLogger) RoundTrip(req *http.Request) (*http.Response, error) {
	start := l.now()
	resp, err := l.base.RoundTrip(req)
	ms := l.now().Sub(start).Milliseconds()
	var line strings.Builder
	if err != nil {
		line.WriteString(oneLine(fmt.Sprintf("%s %s failed in %d milliseconds: %v", req.Method, req.URL, ms, err)))
	} else {
		// The status line's reason phrase is the server's text.
		line.WriteString(oneLine(fmt.Sprintf("%s %s %s in %d milliseconds", req.Method, req.URL, resp.Status, ms)))
	}
	line.WriteString("\n")
	if l.headers {
		writeHeaders(&line, req.Header)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(l.w, line.String())
	return resp, err
}

// CloseIdleConnections passes on to the real transport.
func (l *requestLogger) CloseIdleConnections() {
	if c, ok := l.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// secretHeaders are never printed.
var secretHeaders = map[string]bool{"Authorization": true, "Proxy-Authorization": true, "Cookie": true}

func writeHeaders(b *strings.Builder, h http.Header) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := strings.Join(h[k], ", ")
		if secretHeaders[http.CanonicalHeaderKey(k)] {
			v = "<masked>"
		}
		fmt.Fprintf(b, "    %s: %s\n", k, v)
	}
}
