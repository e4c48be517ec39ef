package kube

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/net/http2"
)

// Transport defaults. Each is what a zero Config field means, or a fixed
// bound where Config has no field.
const (
	defaultReadIdleTimeout = 30 * time.Second // Config.HTTP.ReadIdleTimeout zero
	defaultPingTimeout     = 15 * time.Second // Config.HTTP.PingTimeout zero
	dialTimeout            = 30 * time.Second
	dialKeepAlive          = 30 * time.Second
	tlsHandshakeTimeout    = 10 * time.Second
	idleConnTimeout        = 90 * time.Second
	maxIdleConnsPerHost    = 25
)

// ConfigError says which field of a Config is wrong. It never quotes a
// secret.
type ConfigError struct {
	Field string // "Host", "TLS.CAFile", "Auth.Exec.Command"
	Err   error
}

func (e *ConfigError) Error() string { return "config " + e.Field + ": " + e.Err.Error() }

func (e *ConfigError) Unwrap() error { return e.Err }

// transportDeps are the outside world a transport touches, replaceable in
// tests.
type transportDeps struct {
	now      func() time.Time
	readFile func(string) ([]byte, error)
	dial     func(ctx context.Context, network, addr string) (net.Conn, error) // nil: a net.Dialer
}

func defaultTransportDeps() transportDeps {
	return transportDeps{now: time.Now, readFile: readConfigFile}
}

// RoundTripper builds the whole client transport of c: TLS (with HTTP/2 and
// its health pings) for https, HTTP/1.1 for http, the User-Agent, and the
// credentials (bearer token, rotating token file, basic auth or exec
// plugin). Files named by c are read now; a token file is re-read when it
// changes. Credentials are only attached to requests for c.Host, and never
// over plain http to a host that is not loopback unless
// c.Auth.AllowInsecureToken. The result is safe for concurrent use; build it once
// and share it.
func (c *Config) RoundTripper() (http.RoundTripper, error) {
	return c.roundTripper(defaultTransportDeps())
}

func (c *Config) roundTripper(d transportDeps) (http.RoundTripper, error) {
	host, err := c.hostURL()
	if err != nil {
		return nil, err
	}
	var ex *execProvider
	if c.Auth.Exec != nil {
		if ex, err = newExecProvider(c, d); err != nil {
			return nil, err
		}
	}
	creds, err := c.Auth.credentials(ex, d)
	if err != nil {
		return nil, err
	}
	base := c.HTTP.Transport
	if base == nil {
		t, err := c.newBaseTransport(host.Scheme, ex, d)
		if err != nil {
			return nil, err
		}
		if ex != nil {
			ex.onCertChange = t.CloseIdleConnections
		}
		base = t
	}
	rt := base
	if creds != nil {
		at := &authTransport{base: base, creds: creds, hostKey: hostKey(host),
			allowInsecure: c.Auth.AllowInsecureToken}
		if c.HTTP.Transport == nil {
			at.proxy = c.HTTP.proxy()
		}
		rt = at
	}
	agent := c.HTTP.UserAgent
	if agent == "" {
		agent = defaultUserAgent()
	}
	return &userAgentTransport{base: rt, agent: agent}, nil
}

// hostURL parses c.Host (see parseServer); errors never quote a
// credential in it.
func (c *Config) hostURL() (*url.URL, error) {
	u, err := parseServer(c.Host)
	if err != nil {
		return nil, &ConfigError{Field: "Host", Err: err}
	}
	return u, nil
}

func (h *HTTPConfig) readIdleTimeout() time.Duration {
	switch {
	case h.ReadIdleTimeout < 0:
		return 0 // x/net/http2: zero disables health pings
	case h.ReadIdleTimeout == 0:
		return defaultReadIdleTimeout
	}
	return h.ReadIdleTimeout
}

func (h *HTTPConfig) pingTimeout() time.Duration {
	if h.PingTimeout <= 0 {
		return defaultPingTimeout
	}
	return h.PingTimeout
}

// newBaseTransport builds the *http.Transport for scheme.
func (c *Config) newBaseTransport(scheme string, ex *execProvider, d transportDeps) (*http.Transport, error) {
	if scheme == "http" {
		t := c.newHTTPTransport(d)
		// Plain http is HTTP/1.1 with chunked watch streams; no h2c.
		t.Protocols = new(http.Protocols)
		t.Protocols.SetHTTP1(true)
		return t, nil
	}
	t, _, err := c.newTLSTransport(ex, d)
	return t, err
}

// proxy is the proxy choice of the transport built from h.
func (h *HTTPConfig) proxy() func(*http.Request) (*url.URL, error) {
	if h.Proxy != nil {
		return h.Proxy
	}
	return http.ProxyFromEnvironment
}

func (c *Config) newHTTPTransport(d transportDeps) *http.Transport {
	dial := d.dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: dialTimeout, KeepAlive: dialKeepAlive}).DialContext
	}
	return &http.Transport{
		Proxy:               c.HTTP.proxy(),
		DialContext:         dial,
		TLSHandshakeTimeout: tlsHandshakeTimeout,
		MaxIdleConnsPerHost: maxIdleConnsPerHost,
		IdleConnTimeout:     idleConnTimeout,
		// DisableCompression stays false: the transport asks for gzip and
		// decompresses transparently, which shrinks large lists.
	}
}

// newTLSTransport builds an HTTP/2-capable TLS transport. The http2
// transport is returned so its ping settings can be checked in tests.
func (c *Config) newTLSTransport(ex *execProvider, d transportDeps) (*http.Transport, *http2.Transport, error) {
	tc, err := c.tlsConfig(ex, d.readFile)
	if err != nil {
		return nil, nil, err
	}
	t := c.newHTTPTransport(d)
	t.TLSClientConfig = tc
	h2, err := http2.ConfigureTransports(t)
	if err != nil {
		return nil, nil, fmt.Errorf("configuring HTTP/2: %w", err)
	}
	h2.ReadIdleTimeout = c.HTTP.readIdleTimeout()
	h2.PingTimeout = c.HTTP.pingTimeout()
	return t, h2, nil
}

// tlsConfig builds the TLS client config: verification on unless
// TLS.Insecure, the CA pool (system roots when none is given), a static
// client certificate, or one fetched from the exec plugin at handshake.
func (c *Config) tlsConfig(ex *execProvider, readFile func(string) ([]byte, error)) (*tls.Config, error) {
	tc := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         c.TLS.ServerName,
		InsecureSkipVerify: c.TLS.Insecure,
	}
	ca, field, err := c.TLS.caPEM(readFile)
	if err != nil {
		return nil, &ConfigError{Field: field, Err: err}
	}
	if ca != nil {
		if c.TLS.Insecure {
			return nil, &ConfigError{Field: "TLS.Insecure",
				Err: errors.New("is set together with a CA; verification is either skipped or done with the CA, not both")}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, &ConfigError{Field: field, Err: errors.New("holds no usable PEM certificate")}
		}
		tc.RootCAs = pool
	}
	cert, err := c.TLS.clientCertificate(readFile)
	if err != nil {
		return nil, &ConfigError{Field: "TLS.CertData/KeyData", Err: err}
	}
	switch {
	case cert != nil:
		tc.Certificates = []tls.Certificate{*cert}
	case ex != nil:
		tc.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return ex.clientCertificate(cri.Context())
		}
	}
	return tc, nil
}

// caPEM returns the CA bundle and the field it came from; nil when none is
// configured.
func (t *TLSConfig) caPEM(readFile func(string) ([]byte, error)) ([]byte, string, error) {
	switch {
	case len(t.CAData) > 0:
		return t.CAData, "TLS.CAData", checkPEM(t.CAData, pemCertificate)
	case t.CAFile != "":
		data, err := readPEMFile(t.CAFile, pemCertificate, readFile)
		return data, "TLS.CAFile", err
	}
	return nil, "", nil
}

// clientCertificate loads the static client certificate pair; nil when
// none is configured. Errors name the file but never quote the key.
func (t *TLSConfig) clientCertificate(readFile func(string) ([]byte, error)) (*tls.Certificate, error) {
	certPEM, keyPEM := t.CertData, t.KeyData
	var err error
	if len(certPEM) == 0 && t.CertFile != "" {
		if certPEM, err = readPEMFile(t.CertFile, pemCertificate, readFile); err != nil {
			return nil, err
		}
	}
	if len(keyPEM) == 0 && t.KeyFile != "" {
		if keyPEM, err = readPEMFile(t.KeyFile, pemPrivateKey, readFile); err != nil {
			return nil, err
		}
	}
	switch {
	case len(certPEM) == 0 && len(keyPEM) == 0:
		return nil, nil
	case len(keyPEM) == 0:
		return nil, errors.New("a client certificate is set without its key")
	case len(certPEM) == 0:
		return nil, errors.New("a client key is set without its certificate")
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("client certificate and key do not form a pair: %w", err)
	}
	return &pair, nil
}

// pemKind is what a PEM input must hold.
type pemKind int

const (
	pemCertificate pemKind = iota
	pemPrivateKey
)

func (k pemKind) String() string {
	if k == pemPrivateKey {
		return "private key"
	}
	return "certificate"
}

// checkPEM checks that data holds at least one PEM block of the wanted
// kind, and that every certificate block parses. Errors say which block,
// never what it holds.
func checkPEM(data []byte, want pemKind) error {
	found := false
	rest := bytes.TrimSpace(data)
	for n := 1; len(rest) > 0; n++ {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		switch {
		case want == pemCertificate && b.Type == "CERTIFICATE":
			if _, err := x509.ParseCertificate(b.Bytes); err != nil {
				return fmt.Errorf("PEM block %d (CERTIFICATE) does not parse: %w", n, err)
			}
			found = true
		case want == pemPrivateKey && strings.HasSuffix(b.Type, "PRIVATE KEY"):
			found = true
		}
	}
	if !found {
		return fmt.Errorf("holds no PEM %s", want)
	}
	return nil
}

// readPEMFile reads a certificate or key file and checks its PEM.
func readPEMFile(path string, want pemKind, readFile func(string) ([]byte, error)) ([]byte, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	if err := checkPEM(data, want); err != nil {
		return nil, fmt.Errorf("file %s %w", path, err)
	}
	return data, nil
}

// maxConfigFileSize bounds every file a configuration reads: the kubeconfig
// itself and the certificates, keys and tokens it names. A system CA bundle
// is about 200 KiB; a path pointing at /dev/zero must not eat the memory.
const maxConfigFileSize = 4 << 20

// readConfigFile reads a whole file of at most maxConfigFileSize bytes.
func readConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(data) > maxConfigFileSize {
		return nil, fmt.Errorf("%s is larger than the %d MiB limit", path, maxConfigFileSize>>20)
	}
	return data, nil
}

// decodeBase64PEM decodes a kubeconfig *-data field and checks it holds PEM
// of the wanted kind. Errors never quote the data.
func decodeBase64PEM(s string, want pemKind) ([]byte, error) {
	data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		var ce base64.CorruptInputError
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("is not valid base64 (at offset %d)", int64(ce))
		}
		return nil, errors.New("is not valid base64")
	}
	if err := checkPEM(data, want); err != nil {
		return nil, err
	}
	return data, nil
}
