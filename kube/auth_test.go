package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is an explicit clock for tests.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) deps() transportDeps {
	return transportDeps{now: c.Now, readFile: readConfigFile}
}

// rewriteToken replaces the token file's content and moves its mtime, so
// the change shows even on a file system with coarse timestamps.
func rewriteToken(t *testing.T, path, tok string, mtime time.Time) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(tok), 0o600))
	require.NoError(t, os.Chtimes(path, mtime, mtime))
}

func TestTokenFileRotation(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echoHandler))
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "token")
	mtime := time.Now().Add(-time.Hour)
	rewriteToken(t, path, "tok-1\n", mtime)
	clock := newFakeClock()
	rt, err := (&Config{Host: srv.URL, Auth: AuthConfig{BearerTokenFile: path}, HTTP: HTTPConfig{Proxy: noProxy}}).roundTripper(clock.deps())
	require.NoError(t, err)
	steps := []struct {
		name    string
		change  func()
		advance time.Duration
		want    string
	}{
		{"first read", nil, 0, "Bearer tok-1"},
		{"rotated, but checked less than a second ago", func() { rewriteToken(t, path, "tok-2", mtime.Add(time.Minute)) }, 500 * time.Millisecond, "Bearer tok-1"},
		{"rotated, a second later", nil, 600 * time.Millisecond, "Bearer tok-2"},
		{"file removed mid-rotation keeps the last good token", func() { require.NoError(t, os.Remove(path)) }, 2 * time.Second, "Bearer tok-2"},
		{"file empty mid-rotation keeps the last good token", func() { rewriteToken(t, path, "", mtime.Add(2*time.Minute)) }, 2 * time.Second, "Bearer tok-2"},
		{"new token written", func() { rewriteToken(t, path, "tok-3", mtime.Add(2*time.Minute)) }, 2 * time.Second, "Bearer tok-3"},
	}
	for _, st := range steps {
		if st.change != nil {
			st.change()
		}
		clock.Advance(st.advance)
		resp, lines, err := get(t, rt, srv.URL)
		require.NoError(t, err, st.name)
		require.Equal(t, http.StatusOK, resp.StatusCode, st.name)
		assert.Equal(t, st.want, lines[2], "%s: got Authorization %q, want %q", st.name, lines[2], st.want)
	}
}

func TestTokenFileRereadAfter401(t *testing.T) {
	var current atomic.Value
	current.Store("Bearer tok-1")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != current.Load() {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		echoHandler(w, r)
	}))
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "token")
	mtime := time.Now().Add(-time.Hour)
	rewriteToken(t, path, "tok-1", mtime)
	clock := newFakeClock()
	rt, err := (&Config{Host: srv.URL, Auth: AuthConfig{BearerTokenFile: path}, HTTP: HTTPConfig{Proxy: noProxy}}).roundTripper(clock.deps())
	require.NoError(t, err)
	_, lines, err := get(t, rt, srv.URL)
	require.NoError(t, err)
	require.Equal(t, "Bearer tok-1", lines[2])

	// The server moves on to tok-2 and the file is rotated; the clock does
	// not move, so only the 401 can make the transport look again.
	current.Store("Bearer tok-2")
	rewriteToken(t, path, "tok-2", mtime.Add(time.Minute))
	resp, lines, err := get(t, rt, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "got %d, want the retry with the new token to succeed", resp.StatusCode)
	assert.Equal(t, "Bearer tok-2", lines[2])
}

func TestTokenFileMissingAtFirstUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent")
	rt, err := (&Config{Host: "https://kube.test", Auth: AuthConfig{BearerTokenFile: path}, HTTP: HTTPConfig{Transport: &recordingTransport{}}}).RoundTripper()
	require.NoError(t, err)
	_, _, err = get(t, rt, "https://kube.test/api")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bearer token file")
	assert.Contains(t, err.Error(), path)
}

// dialCounter is an http.Transport whose dialer counts attempts and never
// connects, so nothing leaves the machine.
func dialCounter(n *atomic.Int32) *http.Transport {
	return &http.Transport{
		Proxy: noProxy,
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			n.Add(1)
			return nil, errors.New("test dialer: not dialing")
		},
	}
}

func TestAuthRefusesCleartextToRemoteHost(t *testing.T) {
	tests := []struct {
		name      string
		c         Config
		wantRefus bool
	}{
		{"bearer token", Config{Auth: AuthConfig{BearerToken: "tok-s3cret"}}, true},
		{"basic auth", Config{Auth: AuthConfig{Username: "admin", Password: "pw-s3cret"}}, true},
		{"bearer token, allowed explicitly", Config{Auth: AuthConfig{BearerToken: "tok-s3cret", AllowInsecureToken: true}}, false},
		{"no credentials", Config{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dials atomic.Int32
			c := tt.c
			c.Host = "http://10.255.255.1"
			c.HTTP.Transport = dialCounter(&dials)
			rt, err := c.RoundTripper()
			require.NoError(t, err)
			_, _, err = get(t, rt, "http://10.255.255.1/api/v1/pods")
			require.Error(t, err)
			if tt.wantRefus {
				assert.ErrorIs(t, err, ErrInsecureCredentials)
				assert.Equal(t, int32(0), dials.Load(), "got %d dials, want the refusal before any dial", dials.Load())
				assert.NotContains(t, err.Error(), "s3cret")
				return
			}
			assert.NotErrorIs(t, err, ErrInsecureCredentials)
			assert.Equal(t, int32(1), dials.Load(), "want the request to reach the dialer")
		})
	}
}

func TestAuthAllowsCleartextToLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echoHandler))
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	require.NoError(t, err)
	for _, host := range []string{srv.URL, "http://localhost:" + port} {
		t.Run(host, func(t *testing.T) {
			rt, err := (&Config{Host: host, Auth: AuthConfig{BearerToken: "tok"}, HTTP: HTTPConfig{Proxy: noProxy}}).RoundTripper()
			require.NoError(t, err)
			_, lines, err := get(t, rt, host+"/api")
			require.NoError(t, err)
			assert.Equal(t, "Bearer tok", lines[2])
		})
	}
	assert.True(t, isLoopback("::1"), "::1 is loopback")
	assert.False(t, isLoopback("10.0.0.1"), "10.0.0.1 is not loopback")
}

func TestAuthBasicAndHostScope(t *testing.T) {
	base := &recordingTransport{}
	c := &Config{Host: "https://kube.test", Auth: AuthConfig{Username: "admin", Password: "pw"}, HTTP: HTTPConfig{Transport: base}}
	rt, err := c.RoundTripper()
	require.NoError(t, err)
	tests := []struct {
		url, want string
	}{
		{"https://kube.test/api", "Basic YWRtaW46cHc="},
		{"https://KUBE.test:443/api", "Basic YWRtaW46cHc="},
		{"https://evil.test/api", ""}, // e.g. after a redirect: credentials stay home
		{"https://kube.test:8443/api", ""},
	}
	for i, tt := range tests {
		_, _, err := get(t, rt, tt.url)
		require.NoError(t, err)
		got := base.reqs[i].Header.Get("Authorization")
		assert.Equal(t, tt.want, got, "%s: got Authorization %q, want %q", tt.url, got, tt.want)
	}
}

// Every secret the redaction test plants; none may appear in any output.
var plantedSecrets = []string{"tok-SECRET-1", "pw-SECRET-2", "KEY-SECRET-3", "ENV-SECRET-4", "ARG-SECRET-5", "URL-SECRET-6", "RT-SECRET-7"}

// secretTransport is a caller's Transport holding a secret of its own, as
// an *http.Transport holds a client key in its TLSClientConfig.
type secretTransport struct{ key string }

func (secretTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("unused")
}

func assertNoSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, secret := range plantedSecrets {
		assert.NotContains(t, s, secret, "%s leaks %s: %s", what, secret, s)
	}
}

func TestAuthRedaction(t *testing.T) {
	c := Config{
		Host: "https://admin:URL-SECRET-6@kube.test",
		Auth: AuthConfig{
			BearerToken: "tok-SECRET-1", Username: "admin", Password: "pw-SECRET-2",
			Exec: &ExecConfig{Command: "plugin", Args: []string{"--token=ARG-SECRET-5"}, Env: []ExecEnvVar{{Name: "T", Value: "ENV-SECRET-4"}}},
		},
		TLS:  TLSConfig{KeyData: []byte("-----BEGIN EC PRIVATE KEY-----\nKEY-SECRET-3\n-----END EC PRIVATE KEY-----\n"), CertData: []byte("x")},
		HTTP: HTTPConfig{Transport: secretTransport{key: "RT-SECRET-7"}},
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x", "%T %v"} {
		assertNoSecret(t, "Config "+verb, fmt.Sprintf(verb, c))
		assertNoSecret(t, "*Config "+verb, fmt.Sprintf(verb, &c))
		assertNoSecret(t, "AuthConfig "+verb, fmt.Sprintf(verb, c.Auth))
		assertNoSecret(t, "TLSConfig "+verb, fmt.Sprintf(verb, c.TLS))
		assertNoSecret(t, "HTTPConfig "+verb, fmt.Sprintf(verb, c.HTTP))
		assertNoSecret(t, "ExecConfig "+verb, fmt.Sprintf(verb, c.Auth.Exec))
		assertNoSecret(t, "Env "+verb, fmt.Sprintf(verb, c.Auth.Exec.Env))
	}
	s := c.String()
	assert.Contains(t, s, "BearerToken: <redacted>")
	assert.Contains(t, s, "Password: <redacted>")
	assert.Contains(t, s, "KeyData: <redacted>")
	assert.Contains(t, s, `Username: "admin"`, "non-secret fields stay visible")
	assert.Contains(t, s, "Transport: kube.secretTransport", "a Transport shows as its type")

	// Error paths that hold a secret nearby.
	var errs []error
	_, err := c.RoundTripper() // token and basic auth and exec together
	errs = append(errs, err)
	_, err = (&Config{Host: "https://kube.test", Auth: AuthConfig{BearerToken: "tok-SECRET-1\n"}}).RoundTripper()
	errs = append(errs, err)
	_, err = (&Config{Host: "https://kube.test", TLS: TLSConfig{CertData: []byte("KEY-SECRET-3"), KeyData: []byte("KEY-SECRET-3")}}).RoundTripper()
	errs = append(errs, err)
	_, err = (&Config{Host: "://admin:URL-SECRET-6@kube.test"}).RoundTripper()
	errs = append(errs, err)
	var dials atomic.Int32
	rt, err := (&Config{Host: "http://10.255.255.1", Auth: AuthConfig{BearerToken: "tok-SECRET-1"}, HTTP: HTTPConfig{Transport: dialCounter(&dials)}}).RoundTripper()
	require.NoError(t, err)
	_, _, err = get(t, rt, "http://10.255.255.1/api")
	errs = append(errs, err)
	for i, err := range errs {
		require.Error(t, err, "error path %d", i)
		assertNoSecret(t, fmt.Sprintf("error %d", i), err.Error())
		assertNoSecret(t, fmt.Sprintf("error %d %%+v", i), fmt.Sprintf("%+v", err))
	}
}
