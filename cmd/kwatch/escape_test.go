package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/informer"
)

// hostile is text a server or plugin could send to take over a terminal:
// clear the screen, set the window title, rewrite the line.
const hostile = "denied\x1b[2J\x1b]0;pwned\x07\rgranted \u009b31m é"

func requireNoControls(t *testing.T, what, s string) {
	t.Helper()
	for _, c := range []string{"\x1b", "\x07", "\r", "\u009b"} {
		require.NotContains(t, s, c, "%s keeps %q: %q", what, c, s)
	}
	assert.Contains(t, s, `denied\x1b[2J\x1b]0;pwned\x07`, "%s shows the escapes", what)
	assert.Contains(t, s, "granted", what)
	assert.Contains(t, s, "é", "%s keeps UTF-8 as it is", what)
}

// TestServerTextIsEscapedEverywhereItIsShown: stderr's error lines,
// /readyz, the live view's connection line and -v=6 request lines.
func TestServerTextIsEscapedEverywhereItIsShown(t *testing.T) {
	err := errors.New(hostile)

	var stderr bytes.Buffer
	printErrors(&stderr, err, "kwatch: ")
	requireNoControls(t, "an error line", stderr.String())

	rec := httptest.NewRecorder()
	readyz(rec, informer.Health{Synced: true, LastActivity: time.Now().Add(-time.Hour), LastError: err})
	requireNoControls(t, "/readyz", rec.Body.String())

	var ct connTracker
	requireNoControls(t, "the live view", ct.next(informer.Health{LastError: err}, informer.Stats{}, time.Now()).LastError)

	var log bytes.Buffer
	l := &requestLogger{w: &log, now: time.Now, base: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{Status: "403 " + hostile, StatusCode: 403, Body: io.NopCloser(strings.NewReader(""))}, nil
	})}
	req := httptest.NewRequest(http.MethodGet, "https://kube.test/api", nil)
	resp, rerr := l.RoundTrip(req)
	require.NoError(t, rerr)
	resp.Body.Close()
	requireNoControls(t, "a -v=6 line", log.String())
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
