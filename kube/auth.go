package kube

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
)

// ErrInsecureCredentials refuses a request that would carry a bearer token
// or a password in clear text: plain http to a host that is not loopback,
// or through a proxy that is not. Set Config.Auth.AllowInsecureToken to
// send it anyway.
var ErrInsecureCredentials = errors.New("refusing to send credentials over plain http to a host that is not loopback")

// tokenRecheck is how often a token file is looked at (stat) at most.
const tokenRecheck = time.Second

// credentialSource gives the Authorization header of a request.
// Implementations are safe for concurrent use.
type credentialSource interface {
	// authorization returns the header value, or "" to send none.
	authorization(ctx context.Context) (string, error)
	// unauthorized reports that the server answered 401 to a request that
	// carried used. It drops cached credentials and reports whether asking
	// authorization again may give different ones.
	unauthorized(ctx context.Context, used string) bool
}

// credentials picks the credential source of a; nil when a has none.
// At most one kind may be configured, so that no credential is silently
// ignored.
func (a *AuthConfig) credentials(ex *execProvider, d transportDeps) (credentialSource, error) {
	if set := a.kindsSet(); len(set) > 1 {
		both := "both"
		if len(set) > 2 {
			both = "all"
		}
		return nil, &ConfigError{Field: "Auth",
			Err: fmt.Errorf("%s are %s set; choose one kind of credential", joinAnd(set), both)}
	}
	switch {
	case a.BearerTokenFile != "":
		if a.BearerToken != "" && !validToken(a.BearerToken) {
			return nil, &ConfigError{Field: "Auth.BearerToken", Err: errInvalidToken}
		}
		return &tokenFileSource{path: a.BearerTokenFile, fallback: a.BearerToken,
			now: d.now, readFile: d.readFile}, nil
	case a.BearerToken != "":
		if !validToken(a.BearerToken) {
			return nil, &ConfigError{Field: "Auth.BearerToken", Err: errInvalidToken}
		}
		return staticCredentials("Bearer " + a.BearerToken), nil
	case a.Username != "" || a.Password != "":
		v := "Basic " + base64.StdEncoding.EncodeToString([]byte(a.Username+":"+a.Password))
		if !httpguts.ValidHeaderFieldValue(v) {
			return nil, &ConfigError{Field: "Auth.Username", Err: errors.New("contains a character not allowed in an HTTP header")}
		}
		return staticCredentials(v), nil
	case ex != nil:
		return ex, nil
	}
	return nil, nil
}

// kindsSet names, by their Config paths, the kinds of credential a sets:
// the bearer token (or its file), basic auth and the exec plugin.
func (a *AuthConfig) kindsSet() []string {
	var set []string
	switch {
	case a.BearerToken != "":
		set = append(set, "Auth.BearerToken")
	case a.BearerTokenFile != "":
		set = append(set, "Auth.BearerTokenFile")
	}
	switch {
	case a.Username != "":
		set = append(set, "Auth.Username")
	case a.Password != "":
		set = append(set, "Auth.Password")
	}
	if a.Exec != nil {
		set = append(set, "Auth.Exec")
	}
	return set
}

// joinAnd is "a and b", "a, b and c".
func joinAnd(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

var errInvalidToken = errors.New("bearer token is empty or contains a character not allowed in an HTTP header")

func validToken(tok string) bool {
	return tok != "" && httpguts.ValidHeaderFieldValue(tok) && !strings.ContainsAny(tok, " \t")
}

// staticCredentials is a fixed Authorization header value.
type staticCredentials string

func (s staticCredentials) authorization(context.Context) (string, error) { return string(s), nil }

func (s staticCredentials) unauthorized(context.Context, string) bool { return false }

// tokenFileSource reads a bearer token from a file and re-reads it when the
// file changes, as a projected service-account token is rotated in place.
// It looks at the file at most once per tokenRecheck. When a read fails or
// finds the file empty (a writer mid-rewrite), it keeps the last good token.
type tokenFileSource struct {
	path     string
	fallback string // Config.Auth.BearerToken: used while the file never yielded a token
	now      func() time.Time
	readFile func(string) ([]byte, error)

	mu sync.Mutex
	// token is the last good token ("" before the first). modTime and size
	// describe the file it came from; a change of either triggers a re-read.
	token   string
	modTime time.Time
	size    int64
	// checkedAt is when the file was last looked at; zero forces a look.
	checkedAt time.Time
}

func (s *tokenFileSource) authorization(context.Context) (string, error) {
	tok, err := s.tokenAt(s.now())
	if err != nil {
		return "", err
	}
	return "Bearer " + tok, nil
}

func (s *tokenFileSource) unauthorized(context.Context, string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkedAt = time.Time{}
	return true
}

// tokenAt returns the token current at now.
func (s *tokenFileSource) tokenAt(now time.Time) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	since := now.Sub(s.checkedAt)
	if s.token != "" && !s.checkedAt.IsZero() && since >= 0 && since < tokenRecheck {
		return s.token, nil
	}
	s.checkedAt = now
	tok, fi, err := s.readLocked()
	if err != nil {
		switch {
		case s.token != "":
			return s.token, nil // transient: a rotation in progress
		case s.fallback != "":
			return s.fallback, nil
		}
		return "", err
	}
	if fi != nil {
		s.token, s.modTime, s.size = tok, fi.ModTime(), fi.Size()
	}
	return s.token, nil
}

// readLocked stats the file and reads it when it changed. It returns a nil
// FileInfo when the cached token is still current. s.mu must be held.
func (s *tokenFileSource) readLocked() (string, os.FileInfo, error) {
	fi, err := os.Stat(s.path)
	if err != nil {
		return "", nil, fmt.Errorf("bearer token file: %w", err)
	}
	if s.token != "" && fi.ModTime().Equal(s.modTime) && fi.Size() == s.size {
		return s.token, nil, nil
	}
	data, err := s.readFile(s.path)
	if err != nil {
		return "", nil, fmt.Errorf("bearer token file: %w", err)
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", nil, fmt.Errorf("bearer token file %s is empty", s.path)
	}
	if !validToken(tok) {
		return "", nil, fmt.Errorf("bearer token file %s: %w", s.path, errInvalidToken)
	}
	return tok, fi, nil
}

// authTransport adds credentials to requests for one host.
type authTransport struct {
	base  http.RoundTripper
	creds credentialSource
	// hostKey is the scheme, host and port the credentials belong to.
	// Requests elsewhere (a redirect to another host) go without them.
	hostKey       string
	allowInsecure bool
	// proxy is the base transport's proxy choice (Config.HTTP.Proxy, else
	// the environment's); nil when Config.HTTP.Transport replaces the base,
	// whose proxy is its own business.
	proxy func(*http.Request) (*url.URL, error)
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if hostKey(req.URL) != t.hostKey {
		return t.base.RoundTrip(req)
	}
	// Checked before any credential is fetched and before any dial, also
	// for a request that carries an Authorization of its own.
	if err := t.cleartext(req); err != nil {
		closeRequestBody(req)
		return nil, err
	}
	if req.Header.Get("Authorization") != "" {
		return t.base.RoundTrip(req)
	}
	used, err := t.creds.authorization(req.Context())
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	resp, err := t.base.RoundTrip(withAuthorization(req, used))
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !rewindable(req) {
		return resp, err
	}
	// Credentials may have expired or been revoked: refresh them and retry
	// once if they changed.
	if !t.creds.unauthorized(req.Context(), used) {
		return resp, nil
	}
	fresh, err := t.creds.authorization(req.Context())
	if err != nil || fresh == used {
		return resp, nil
	}
	retry, err := rewind(req)
	if err != nil {
		return resp, nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	return t.base.RoundTrip(withAuthorization(retry, fresh))
}

// cleartext refuses a plain-http request whose credentials would cross a
// network in clear: to a host that is not loopback, or through a proxy
// that is not (the request reaches the proxy as it is, and a loopback
// address behind a remote proxy is the proxy's own loopback).
func (t *authTransport) cleartext(req *http.Request) error {
	if t.allowInsecure || req.URL.Scheme != "http" {
		return nil
	}
	if !isLoopback(req.URL.Hostname()) {
		return fmt.Errorf("%w: %s (use https, or set Auth.AllowInsecureToken)", ErrInsecureCredentials, req.URL.Host)
	}
	if t.proxy == nil {
		return nil
	}
	p, err := t.proxy(req)
	if err != nil || p == nil || isLoopback(p.Hostname()) {
		return nil // a proxy error is the base transport's to report
	}
	return fmt.Errorf("%w: %s through the proxy %s (use https, or set Auth.AllowInsecureToken)", ErrInsecureCredentials, req.URL.Host, p.Host)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the base.
func (t *authTransport) CloseIdleConnections() { closeIdle(t.base) }

func withAuthorization(req *http.Request, v string) *http.Request {
	if v == "" {
		return req
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", v)
	return r
}

func rewindable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	return r, nil
}

func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// hostKey is "scheme://host:port" with the scheme's default port filled
// in, so "https://h" and "https://h:443" match.
func hostKey(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// userAgentTransport sets the User-Agent of requests that have none.
type userAgentTransport struct {
	base  http.RoundTripper
	agent string
}

func (t *userAgentTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("User-Agent") != "" {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	r.Header.Set("User-Agent", t.agent)
	return t.base.RoundTrip(r)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the base.
func (t *userAgentTransport) CloseIdleConnections() { closeIdle(t.base) }

func closeIdle(rt http.RoundTripper) {
	if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
