package kube

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServerUserInfoIsRefused: user info in the server address is refused
// by every door (NewClient, RoundTripper, a kubeconfig), with an error
// naming the field and the address with the whole user info redacted, and
// nothing is sent. Before, NewClient took it, and net/http sent it as
// basic auth even over plain http to a remote host.
func TestServerUserInfoIsRefused(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	for name, host := range map[string]string{
		"user name only":                "http://tok-URLSECRET@" + addr,
		"user name and password":        "http://admin:pw-URLSECRET@" + addr,
		"no scheme (https, as kubectl)": "tok-URLSECRET:x@" + addr,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewClient(&Config{Host: host, HTTP: HTTPConfig{Proxy: noProxy}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "Config.Host")
			assert.Contains(t, err.Error(), "<redacted>@"+addr, "the redacted address")
			assert.ErrorIs(t, err, errServerUserInfo)

			_, err = (&Config{Host: host, HTTP: HTTPConfig{Proxy: noProxy}}).RoundTripper()
			var ce *ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, "Host", ce.Field)

			f := newKCFixture(t, map[string]string{"k.yaml": "current-context: x\ncontexts: [{name: x, context: {cluster: x}}]\n" +
				"clusters: [{name: x, cluster: {server: \"" + host + "\"}}]\n"})
			_, err = LoadKubeconfig(KubeconfigOptions{Path: filepath.Join(f.dir, "k.yaml")})
			var ke *KubeconfigError
			require.ErrorAs(t, err, &ke)
			assert.Equal(t, "clusters[x].server", ke.Field)

			for _, s := range []string{err.Error(), (Config{Host: host}).String()} {
				assert.NotContains(t, s, "URLSECRET")
			}
		})
	}
	assert.Zero(t, hits.Load(), "nothing may reach the server")
}

// TestPresetAuthorizationIsRefusedInClear: a request that carries an
// Authorization of its own is held to the same rule as the credentials
// the transport adds.
func TestPresetAuthorizationIsRefusedInClear(t *testing.T) {
	var dials atomic.Int32
	rt, err := (&Config{Host: "http://10.255.255.1", Auth: AuthConfig{BearerToken: "tok"}, HTTP: HTTPConfig{Transport: dialCounter(&dials)}}).RoundTripper()
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodGet, "http://10.255.255.1/api", nil)
	require.NoError(t, err)
	req.SetBasicAuth("admin", "pw")
	_, err = rt.RoundTrip(req)
	require.ErrorIs(t, err, ErrInsecureCredentials)
	assert.Zero(t, dials.Load(), "refused before any dial")
}

// dialLog is a dialer that records the addresses it is asked for and
// never connects.
type dialLog struct {
	mu    sync.Mutex
	addrs []string
}

func (d *dialLog) dial(_ context.Context, _, addr string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addrs = append(d.addrs, addr)
	return nil, errors.New("test dialer: not dialing")
}

// TestCredentialsNeverCrossAProxyInClear: a kubeconfig's proxy-url is
// where a plain-http request goes first, token and all: a proxy that is
// not loopback is refused as a server that is not loopback is. Before, the
// loopback check looked at the request's own host only.
func TestCredentialsNeverCrossAProxyInClear(t *testing.T) {
	tests := []struct {
		name, server, proxy string
		refused             bool
	}{
		{"loopback server behind a remote proxy", "http://127.0.0.1:8080", "http://10.255.255.1:3128", true},
		{"loopback server behind a remote socks proxy", "http://localhost:8080", "socks5://10.255.255.1:1080", true},
		{"loopback server behind a remote https proxy", "http://127.0.0.1:8080", "https://proxy.example:3128", true},
		{"loopback server behind a loopback proxy", "http://127.0.0.1:8080", "http://127.0.0.1:3128", false},
		{"https server behind a remote proxy (a tunnel)", "https://10.0.0.1:6443", "http://10.255.255.1:3128", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newKCFixture(t, map[string]string{"k.yaml": "current-context: x\ncontexts: [{name: x, context: {cluster: x, user: u}}]\n" +
				"clusters: [{name: x, cluster: {server: \"" + tt.server + "\", proxy-url: \"" + tt.proxy + "\"}}]\n" +
				"users: [{name: u, user: {token: tok-PROXYSECRET}}]\n"})
			c, err := LoadKubeconfig(KubeconfigOptions{Path: filepath.Join(f.dir, "k.yaml")})
			require.NoError(t, err)
			var dials dialLog
			deps := defaultTransportDeps()
			deps.dial = dials.dial
			rt, err := c.roundTripper(deps)
			require.NoError(t, err)
			_, _, err = get(t, rt, tt.server+"/api")
			require.Error(t, err)
			if !tt.refused {
				assert.NotErrorIs(t, err, ErrInsecureCredentials)
				assert.NotEmpty(t, dials.addrs, "want the request to reach the dialer")
				return
			}
			assert.ErrorIs(t, err, ErrInsecureCredentials)
			assert.Contains(t, err.Error(), "through the proxy")
			assert.NotContains(t, err.Error(), "PROXYSECRET")
			assert.Empty(t, dials.addrs, "refused before any dial")
		})
	}
}
