package kube

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInClusterConfig(t *testing.T) {
	p := newTestPKI(t)
	sa := t.TempDir()
	token := writeFile(t, sa, "token", "sa-token\n")
	ca := writeFile(t, sa, "ca.crt", string(p.caPEM))
	ns := writeFile(t, sa, "namespace", "kube-system\n")
	badCA := writeFile(t, sa, "bad-ca.crt", "not a certificate")
	missing := filepath.Join(sa, "missing")
	tests := []struct {
		name          string
		host, port    string
		token, ca, ns string
		wantHost      string
		wantNS        string
		wantErr       []string
		wantNoCluster bool
	}{
		{name: "ipv4", host: "10.96.0.1", port: "443", token: token, ca: ca, ns: ns,
			wantHost: "https://10.96.0.1:443", wantNS: "kube-system"},
		{name: "ipv6", host: "fd00::1", port: "6443", token: token, ca: ca, ns: ns,
			wantHost: "https://[fd00::1]:6443", wantNS: "kube-system"},
		{name: "ipv6 already bracketed", host: "[fd00::1]", port: "443", token: token, ca: ca, ns: ns,
			wantHost: "https://[fd00::1]:443", wantNS: "kube-system"},
		{name: "no namespace file", host: "10.0.0.1", port: "443", token: token, ca: ca, ns: missing,
			wantHost: "https://10.0.0.1:443", wantNS: "default"},
		{name: "not in a cluster", port: "443", token: token, ca: ca, ns: ns, wantNoCluster: true,
			wantErr: []string{"KUBERNETES_SERVICE_HOST"}},
		{name: "bad port", host: "10.0.0.1", port: "https", token: token, ca: ca, ns: ns,
			wantErr: []string{`KUBERNETES_SERVICE_PORT "https" is not a port number`}},
		{name: "no token", host: "10.0.0.1", port: "443", token: missing, ca: ca, ns: ns,
			wantErr: []string{"service account token", missing}},
		{name: "bad CA", host: "10.0.0.1", port: "443", token: token, ca: badCA, ns: ns,
			wantErr: []string{"service account CA", "bad-ca.crt holds no PEM certificate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := inClusterEnv{
				getenv:    envMap(map[string]string{"KUBERNETES_SERVICE_HOST": tt.host, "KUBERNETES_SERVICE_PORT": tt.port}),
				tokenFile: tt.token, caFile: tt.ca, namespaceFile: tt.ns,
			}
			c, err := inClusterConfig(env)
			if tt.wantErr != nil {
				require.Error(t, err)
				for _, w := range tt.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				assert.Equal(t, tt.wantNoCluster, errors.Is(err, ErrNoCluster), "errors.Is(err, ErrNoCluster)")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantHost, c.Host)
			assert.Equal(t, tt.wantNS, c.Namespace)
			assert.Equal(t, tt.token, c.Auth.BearerTokenFile, "the token is a file so rotation is seen")
			assert.Empty(t, c.Auth.BearerToken)
			assert.Equal(t, tt.ca, c.TLS.CAFile)
			_, err = c.RoundTripper()
			require.NoError(t, err)
		})
	}
}

func TestInClusterConfigOutsideACluster(t *testing.T) {
	if inClusterAvailable(envMap(nil)) {
		t.Fatal("an empty environment must not look like a pod")
	}
	env := defaultInClusterEnv()
	env.getenv = envMap(nil)
	_, err := inClusterConfig(env)
	assert.ErrorIs(t, err, ErrNoCluster)
	assert.NotErrorIs(t, err, fs.ErrNotExist)
}
