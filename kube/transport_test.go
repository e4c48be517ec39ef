package kube

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testPKI is a CA made for one test, with a server certificate for
// 127.0.0.1 and localhost and a client certificate.
type testPKI struct {
	caCert  *x509.Certificate
	caKey   *ecdsa.PrivateKey
	caPEM   []byte
	server  tls.Certificate
	certPEM []byte // client certificate, CN "test-client"
	keyPEM  []byte
}

var serial struct {
	sync.Mutex
	n int64
}

func nextSerial() *big.Int {
	serial.Lock()
	defer serial.Unlock()
	serial.n++
	return big.NewInt(serial.n)
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: "kwatch test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	p := &testPKI{caCert: ca, caKey: key, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	srvCert, srvKey := p.issue(t, "127.0.0.1", x509.ExtKeyUsageServerAuth)
	p.server, err = tls.X509KeyPair(srvCert, srvKey)
	require.NoError(t, err)
	p.certPEM, p.keyPEM = p.issue(t, "test-client", x509.ExtKeyUsageClientAuth)
	return p
}

// issue signs a leaf certificate for cn and returns it and its key as PEM.
func (p *testPKI) issue(t testing.TB, cn string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.DNSNames = []string{"localhost", "kube.test"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func (p *testPKI) pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	return pool
}

// echoHandler answers with the protocol, the client certificate's CN (or
// "-"), the Authorization header and the User-Agent, one per line.
func echoHandler(w http.ResponseWriter, r *http.Request) {
	cn := "-"
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		cn = r.TLS.PeerCertificates[0].Subject.CommonName
	}
	_, _ = io.WriteString(w, r.Proto+"\n"+cn+"\n"+r.Header.Get("Authorization")+"\n"+r.Header.Get("User-Agent"))
}

// newTLSServer starts an HTTP/2-enabled TLS server with the PKI's server
// certificate; clientAuth says how it treats client certificates.
func newTLSServer(t *testing.T, p *testPKI, clientAuth tls.ClientAuthType, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{p.server}, ClientAuth: clientAuth, ClientCAs: p.pool()}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// noProxy keeps tests independent of the environment's proxy settings.
func noProxy(*http.Request) (*url.URL, error) { return nil, nil }

// get sends GET u through rt and returns the status and body lines.
func get(t *testing.T, rt http.RoundTripper, u string) (*http.Response, []string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, strings.Split(string(body), "\n"), nil
}

func TestTLSServerVerification(t *testing.T) {
	p := newTestPKI(t)
	srv := newTLSServer(t, p, tls.NoClientCert, http.HandlerFunc(echoHandler))
	other := newTestPKI(t)
	tests := []struct {
		name    string
		tls     TLSConfig
		wantErr bool
	}{
		{"CA data verifies", TLSConfig{CAData: p.caPEM}, false},
		{"no CA fails against system roots", TLSConfig{}, true},
		{"another CA fails", TLSConfig{CAData: other.caPEM}, true},
		{"wrong server name fails", TLSConfig{CAData: p.caPEM, ServerName: "elsewhere.test"}, true},
		{"server name in the SANs verifies", TLSConfig{CAData: p.caPEM, ServerName: "kube.test"}, false},
		{"insecure skips verification", TLSConfig{Insecure: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{Host: srv.URL, TLS: tt.tls, HTTP: HTTPConfig{Proxy: noProxy}}
			rt, err := c.RoundTripper()
			require.NoError(t, err)
			resp, _, err := get(t, rt, srv.URL)
			if tt.wantErr {
				var ve *tls.CertificateVerificationError
				require.Error(t, err)
				assert.True(t, errors.As(err, &ve), "got error %v, want a certificate verification error", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
		})
	}
}

func TestTLSCAFile(t *testing.T) {
	p := newTestPKI(t)
	srv := newTLSServer(t, p, tls.NoClientCert, http.HandlerFunc(echoHandler))
	dir := t.TempDir()
	caFile := writeFile(t, dir, "ca.crt", string(p.caPEM))
	rt, err := (&Config{Host: srv.URL, TLS: TLSConfig{CAFile: caFile}, HTTP: HTTPConfig{Proxy: noProxy}}).RoundTripper()
	require.NoError(t, err)
	_, _, err = get(t, rt, srv.URL)
	require.NoError(t, err)
}

func TestTLSClientCertificate(t *testing.T) {
	p := newTestPKI(t)
	srv := newTLSServer(t, p, tls.RequireAndVerifyClientCert, http.HandlerFunc(echoHandler))
	dir := t.TempDir()
	certFile := writeFile(t, dir, "client.crt", string(p.certPEM))
	keyFile := writeFile(t, dir, "client.key", string(p.keyPEM))
	stranger := newTestPKI(t)
	tests := []struct {
		name   string
		tls    TLSConfig
		wantCN string // "" means the handshake must fail
	}{
		{"data", TLSConfig{CAData: p.caPEM, CertData: p.certPEM, KeyData: p.keyPEM}, "test-client"},
		{"files", TLSConfig{CAData: p.caPEM, CertFile: certFile, KeyFile: keyFile}, "test-client"},
		{"none", TLSConfig{CAData: p.caPEM}, ""},
		{"signed by another CA", TLSConfig{CAData: p.caPEM, CertData: stranger.certPEM, KeyData: stranger.keyPEM}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, err := (&Config{Host: srv.URL, TLS: tt.tls, HTTP: HTTPConfig{Proxy: noProxy}}).RoundTripper()
			require.NoError(t, err)
			_, lines, err := get(t, rt, srv.URL)
			if tt.wantCN == "" {
				assert.Error(t, err, "got a response, want the server to refuse the handshake")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantCN, lines[1], "client certificate CN seen by the server")
		})
	}
}

func TestTransportHTTP2OnTLS(t *testing.T) {
	p := newTestPKI(t)
	srv := newTLSServer(t, p, tls.NoClientCert, http.HandlerFunc(echoHandler))
	rt, err := (&Config{Host: srv.URL, TLS: TLSConfig{CAData: p.caPEM}, HTTP: HTTPConfig{Proxy: noProxy}}).RoundTripper()
	require.NoError(t, err)
	resp, lines, err := get(t, rt, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, 2, resp.ProtoMajor, "got %s, want HTTP/2", resp.Proto)
	assert.Equal(t, "HTTP/2.0", lines[0], "protocol seen by the server")
}

func TestTransportHTTP1OnPlainHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echoHandler))
	t.Cleanup(srv.Close)
	rt, err := (&Config{Host: srv.URL, HTTP: HTTPConfig{Proxy: noProxy}}).RoundTripper()
	require.NoError(t, err)
	resp, lines, err := get(t, rt, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, 1, resp.ProtoMajor)
	assert.Equal(t, 1, resp.ProtoMinor)
	assert.Equal(t, "HTTP/1.1", lines[0])
}

func TestTransportPingSettings(t *testing.T) {
	tests := []struct {
		name                   string
		readIdle, ping         time.Duration
		wantReadIdle, wantPing time.Duration
	}{
		{"defaults", 0, 0, 30 * time.Second, 15 * time.Second},
		{"set", 5 * time.Second, 2 * time.Second, 5 * time.Second, 2 * time.Second},
		{"negative read idle disables pings", -1, 0, 0, 15 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{Host: "https://127.0.0.1:1", HTTP: HTTPConfig{ReadIdleTimeout: tt.readIdle, PingTimeout: tt.ping}}
			_, h2, err := c.newTLSTransport(nil, defaultTransportDeps())
			require.NoError(t, err)
			assert.Equal(t, tt.wantReadIdle, h2.ReadIdleTimeout, "ReadIdleTimeout")
			assert.Equal(t, tt.wantPing, h2.PingTimeout, "PingTimeout")
		})
	}
}

func TestTransportCompressionAndTLSDefaults(t *testing.T) {
	c := &Config{Host: "https://127.0.0.1:1"}
	tr, _, err := c.newTLSTransport(nil, defaultTransportDeps())
	require.NoError(t, err)
	assert.False(t, tr.DisableCompression, "gzip must stay accepted")
	assert.False(t, tr.TLSClientConfig.InsecureSkipVerify, "verification must be on by default")
	assert.NotNil(t, tr.Proxy, "the environment's proxy is used when Config.HTTP.Proxy is nil")
}

// recordingTransport is a base RoundTripper that answers 200 and keeps the
// requests it saw.
type recordingTransport struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
}

func TestTransportCustomBaseAndUserAgent(t *testing.T) {
	tests := []struct {
		name, agent, reqAgent, want string
	}{
		{"default", "", "", "kwatch/" + Version},
		{"configured", "my-controller/1.0", "", "my-controller/1.0"},
		{"the request's own wins", "my-controller/1.0", "caller/2", "caller/2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := &recordingTransport{}
			c := &Config{Host: "https://kube.test", HTTP: HTTPConfig{Transport: base, UserAgent: tt.agent}, Auth: AuthConfig{BearerToken: "tok"}}
			rt, err := c.RoundTripper()
			require.NoError(t, err)
			req, err := http.NewRequest(http.MethodGet, "https://kube.test/api", nil)
			require.NoError(t, err)
			if tt.reqAgent != "" {
				req.Header.Set("User-Agent", tt.reqAgent)
			}
			resp, err := rt.RoundTrip(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Len(t, base.reqs, 1)
			got := base.reqs[0]
			assert.Equal(t, tt.want, got.Header.Get("User-Agent"))
			assert.Equal(t, "Bearer tok", got.Header.Get("Authorization"))
			assert.Empty(t, req.Header.Get("Authorization"), "the caller's request must not be modified")
		})
	}
}

func TestTransportConfigErrors(t *testing.T) {
	p := newTestPKI(t)
	tests := []struct {
		name string
		c    Config
		want string
	}{
		{"no host", Config{}, "config Host: is empty"},
		{"bad scheme", Config{Host: "ftp://x"}, `has scheme "ftp"`},
		{"no host part", Config{Host: "https://"}, "has no host"},
		{"insecure with CA", Config{Host: "https://x", TLS: TLSConfig{Insecure: true, CAData: p.caPEM}}, "TLS.Insecure"},
		{"bad CA data", Config{Host: "https://x", TLS: TLSConfig{CAData: []byte("nope")}}, "TLS.CAData: holds no PEM certificate"},
		{"missing CA file", Config{Host: "https://x", TLS: TLSConfig{CAFile: "does-not-exist.crt"}}, "does-not-exist.crt"},
		{"cert without key", Config{Host: "https://x", TLS: TLSConfig{CertData: p.certPEM}}, "without its key"},
		{"mismatched pair", Config{Host: "https://x", TLS: TLSConfig{CertData: p.certPEM, KeyData: newTestPKI(t).keyPEM}}, "do not form a pair"},
		{"two kinds of credentials", Config{Host: "https://x", Auth: AuthConfig{BearerToken: "a", Username: "u"}},
			"config Auth: Auth.BearerToken and Auth.Username are both set"},
		{"three kinds of credentials", Config{Host: "https://x", Auth: AuthConfig{BearerTokenFile: "t", Password: "p", Exec: &ExecConfig{Command: "x"}}},
			"Auth.BearerTokenFile, Auth.Password and Auth.Exec are all set"},
		{"token with a newline", Config{Host: "https://x", Auth: AuthConfig{BearerToken: "a\nb"}}, "not allowed in an HTTP header"},
		{"bad exec api version", Config{Host: "https://x", Auth: AuthConfig{Exec: &ExecConfig{Command: "x", APIVersion: "v0"}}}, "Exec.APIVersion"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.RoundTripper()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			var ce *ConfigError
			assert.True(t, errors.As(err, &ce), "got %T, want a *ConfigError", err)
		})
	}
}

func TestTransportProxy(t *testing.T) {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "via proxy\n"+r.URL.String())
	}))
	t.Cleanup(proxy.Close)
	proxyURL, err := url.Parse(proxy.URL)
	require.NoError(t, err)
	rt, err := (&Config{Host: "http://kube.test", HTTP: HTTPConfig{Proxy: http.ProxyURL(proxyURL)}}).RoundTripper()
	require.NoError(t, err)
	_, lines, err := get(t, rt, "http://kube.test/api/v1/pods")
	require.NoError(t, err)
	assert.Equal(t, []string{"via proxy", "http://kube.test/api/v1/pods"}, lines)
}

// nopTransport answers 200 with no body and keeps nothing.
type nopTransport struct{}

func (nopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
}

// BenchmarkTransportWrappers measures what the User-Agent and auth
// wrappers add to each request.
func BenchmarkTransportWrappers(b *testing.B) {
	path := filepath.Join(b.TempDir(), "token")
	require.NoError(b, os.WriteFile(path, []byte("tok"), 0o600))
	for _, tc := range []struct {
		name string
		c    Config
	}{
		{"none", Config{}},
		{"bearer", Config{Auth: AuthConfig{BearerToken: "tok"}}},
		{"token-file", Config{Auth: AuthConfig{BearerTokenFile: path}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := tc.c
			c.Host, c.HTTP.Transport = "https://kube.test", nopTransport{}
			rt, err := c.RoundTripper()
			require.NoError(b, err)
			req, err := http.NewRequest(http.MethodGet, "https://kube.test/api/v1/pods", nil)
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
}
