package kube

import (
	"encoding/base64"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFile writes content to dir/name (creating parent directories) and
// returns the path.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// envMap is a Getenv over a fixed map.
func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// kcFixture is a directory of kubeconfig files for one test.
type kcFixture struct {
	dir string
	pki *testPKI
}

func newKCFixture(t *testing.T, files map[string]string) *kcFixture {
	t.Helper()
	f := &kcFixture{dir: t.TempDir(), pki: newTestPKI(t)}
	for name, content := range files {
		content = strings.NewReplacer(
			"$DIR", f.dir,
			"$CA_DATA", b64(f.pki.caPEM),
			"$CERT_DATA", b64(f.pki.certPEM),
			"$KEY_DATA", b64(f.pki.keyPEM),
			"$OTHER_KEY_DATA", b64(newTestPKI(t).keyPEM),
		).Replace(content)
		writeFile(t, f.dir, name, content)
	}
	writeFile(t, f.dir, "pki/ca.crt", string(f.pki.caPEM))
	writeFile(t, f.dir, "pki/client.crt", string(f.pki.certPEM))
	writeFile(t, f.dir, "pki/client.key", string(f.pki.keyPEM))
	writeFile(t, f.dir, "pki/token", "file-token\n")
	return f
}

// kubeconfigPathsEnv joins names of fixture files into a KUBECONFIG value.
func (f *kcFixture) kubeconfigEnv(names ...string) string {
	paths := make([]string, len(names))
	for i, n := range names {
		paths[i] = filepath.Join(f.dir, n)
	}
	return strings.Join(paths, string(os.PathListSeparator))
}

const kcA = `
apiVersion: v1
kind: Config
clusters:
- name: shared
  cluster:
    server: https://a.example:6443
    certificate-authority-data: $CA_DATA
- name: only-a
  cluster:
    server: https://only-a.example
users:
- name: alice
  user:
    token: token-a
contexts:
- name: ctx-a
  context: {cluster: shared, user: alice, namespace: team-a}
`

const kcB = `
current-context: ctx-b
clusters:
- name: shared
  cluster:
    server: https://b.example:6443
users:
- name: alice
  user:
    token: token-b
- name: bob
  user:
    username: bob
    password: hunter2
contexts:
- name: ctx-a
  context: {cluster: only-a, user: bob}
- name: ctx-b
  context: {cluster: shared, user: bob}
`

const kcC = `
current-context: ctx-c
clusters:
- name: c
  cluster: {server: "10.0.0.9:6443", insecure-skip-tls-verify: true, tls-server-name: kube.internal, proxy-url: "http://proxy.example:3128"}
users:
- name: carol
  user: {tokenFile: pki/token}
contexts:
- name: ctx-c
  context: {cluster: c, user: carol}
`

const kcRelative = `
current-context: rel
clusters:
- name: rel
  cluster: {server: "https://rel.example", certificate-authority: ../pki/ca.crt}
users:
- name: rel
  user:
    client-certificate: ../pki/client.crt
    client-key: ../pki/client.key
    exec: {command: ./bin/plugin, apiVersion: client.authentication.k8s.io/v1, args: [a], env: [{name: K, value: V}], provideClusterInfo: true}
contexts:
- name: rel
  context: {cluster: rel, user: rel}
`

func TestKubeconfigMerge(t *testing.T) {
	f := newKCFixture(t, map[string]string{"a.yaml": kcA, "b.yaml": kcB, "c.yaml": kcC, "sub/rel.yaml": kcRelative,
		"home/.kube/config": kcB})
	tests := []struct {
		name  string
		env   string // KUBECONFIG
		opts  KubeconfigOptions
		check func(t *testing.T, c *Config)
	}{
		{"current-context from the first file that sets it", f.kubeconfigEnv("a.yaml", "b.yaml", "c.yaml"), KubeconfigOptions{},
			func(t *testing.T, c *Config) {
				assert.Equal(t, "https://a.example:6443", c.Host, "cluster shared: a.yaml defines it first")
				assert.Equal(t, "bob", c.Auth.Username)
				assert.Equal(t, "hunter2", c.Auth.Password)
				assert.Equal(t, "default", c.Namespace)
				assert.Equal(t, f.pki.caPEM, c.TLS.CAData)
			}},
		{"first file wins per context and user", f.kubeconfigEnv("a.yaml", "b.yaml"), KubeconfigOptions{Context: "ctx-a"},
			func(t *testing.T, c *Config) {
				assert.Equal(t, "https://a.example:6443", c.Host, "ctx-a from a.yaml names cluster shared")
				assert.Equal(t, "token-a", c.Auth.BearerToken, "alice from a.yaml")
				assert.Equal(t, "team-a", c.Namespace)
			}},
		{"order reversed", f.kubeconfigEnv("b.yaml", "a.yaml"), KubeconfigOptions{Context: "ctx-a"},
			func(t *testing.T, c *Config) {
				assert.Equal(t, "https://only-a.example", c.Host, "ctx-a from b.yaml names cluster only-a")
				assert.Equal(t, "bob", c.Auth.Username)
			}},
		{"missing files in KUBECONFIG are skipped", f.kubeconfigEnv("nope.yaml", "c.yaml", "b.yaml"), KubeconfigOptions{},
			func(t *testing.T, c *Config) {
				assert.Equal(t, "https://10.0.0.9:6443", c.Host, "a server without scheme means https")
				assert.True(t, c.TLS.Insecure)
				assert.Equal(t, "kube.internal", c.TLS.ServerName)
				assert.Equal(t, filepath.Join(f.dir, "pki", "token"), c.Auth.BearerTokenFile, "tokenFile is relative to c.yaml")
				require.NotNil(t, c.HTTP.Proxy)
				req, err := http.NewRequest(http.MethodGet, c.Host, nil)
				require.NoError(t, err)
				u, err := c.HTTP.Proxy(req)
				require.NoError(t, err)
				assert.Equal(t, "http://proxy.example:3128", u.String(), "proxy-url")
			}},
		{"namespace override", f.kubeconfigEnv("a.yaml"), KubeconfigOptions{Context: "ctx-a", Namespace: "other"},
			func(t *testing.T, c *Config) { assert.Equal(t, "other", c.Namespace) }},
		{"relative paths resolve against the file's directory", f.kubeconfigEnv("sub/rel.yaml"), KubeconfigOptions{},
			func(t *testing.T, c *Config) {
				assert.Equal(t, filepath.Join(f.dir, "pki", "ca.crt"), c.TLS.CAFile)
				assert.Equal(t, filepath.Join(f.dir, "pki", "client.crt"), c.TLS.CertFile)
				assert.Equal(t, filepath.Join(f.dir, "pki", "client.key"), c.TLS.KeyFile)
				require.NotNil(t, c.Auth.Exec)
				assert.Equal(t, filepath.Join(f.dir, "sub", "bin", "plugin"), c.Auth.Exec.Command)
				assert.Equal(t, []string{"a"}, c.Auth.Exec.Args)
				assert.Equal(t, []ExecEnvVar{{Name: "K", Value: "V"}}, c.Auth.Exec.Env)
				assert.True(t, c.Auth.Exec.ProvideClusterInfo)
			}},
		{"explicit path ignores KUBECONFIG", f.kubeconfigEnv("a.yaml"), KubeconfigOptions{Path: filepath.Join(f.dir, "c.yaml")},
			func(t *testing.T, c *Config) { assert.Equal(t, "https://10.0.0.9:6443", c.Host) }},
		{"home config without KUBECONFIG", "", KubeconfigOptions{HomeDir: filepath.Join(f.dir, "home")},
			func(t *testing.T, c *Config) { assert.Equal(t, "https://b.example:6443", c.Host) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Getenv = envMap(map[string]string{"KUBECONFIG": tt.env})
			if opts.HomeDir == "" {
				opts.HomeDir = filepath.Join(f.dir, "no-home")
			}
			c, err := LoadKubeconfig(opts)
			require.NoError(t, err)
			tt.check(t, c)
		})
	}
}

func TestKubeconfigClientCertificateData(t *testing.T) {
	f := newKCFixture(t, map[string]string{"k.yaml": `
current-context: x
clusters: [{name: x, cluster: {server: "https://x.example"}}]
users: [{name: x, user: {client-certificate-data: $CERT_DATA, client-key-data: $KEY_DATA}}]
contexts: [{name: x, context: {cluster: x, user: x}}]
`})
	c, err := LoadKubeconfig(KubeconfigOptions{Path: filepath.Join(f.dir, "k.yaml")})
	require.NoError(t, err)
	assert.Equal(t, f.pki.certPEM, c.TLS.CertData)
	assert.Equal(t, f.pki.keyPEM, c.TLS.KeyData)
	_, err = c.RoundTripper()
	require.NoError(t, err)
}

func TestKubeconfigErrors(t *testing.T) {
	one := func(cluster, user string) string {
		return "current-context: x\nclusters: [{name: x, cluster: " + cluster + "}]\n" +
			"users: [{name: u, user: " + user + "}]\ncontexts: [{name: x, context: {cluster: x, user: u}}]\n"
	}
	okCluster := `{server: "https://x.example"}`
	tests := []struct {
		name    string
		content string // of k.yaml, read with --kubeconfig
		opts    KubeconfigOptions
		want    []string // substrings; "$FILE" is k.yaml's path
	}{
		{"yaml syntax", "clusters: [\n  - name: x\n  bad", KubeconfigOptions{}, []string{"$FILE", "not a valid kubeconfig", "line"}},
		{"wrong type", "clusters: 5", KubeconfigOptions{}, []string{"$FILE", "not a valid kubeconfig", "clusters"}},
		{"unknown context", one(okCluster, "{}"), KubeconfigOptions{Context: "nope"}, []string{"$FILE", `no context named "nope"`, `known: "x"`}},
		{"no current-context", "clusters: []", KubeconfigOptions{}, []string{"$FILE", "current-context: not set"}},
		{"context names a missing cluster", "current-context: x\ncontexts: [{name: x, context: {cluster: gone}}]",
			KubeconfigOptions{}, []string{"$FILE", "contexts[x].cluster", `names cluster "gone"`}},
		{"context names a missing user", "current-context: x\nclusters: [{name: x, cluster: " + okCluster + "}]\ncontexts: [{name: x, context: {cluster: x, user: ghost}}]",
			KubeconfigOptions{}, []string{"$FILE", "contexts[x].user", `names user "ghost"`}},
		{"empty server", one(`{server: ""}`, "{}"), KubeconfigOptions{}, []string{"clusters[x].server: is empty"}},
		{"bad server scheme", one(`{server: "ftp://x"}`, "{}"), KubeconfigOptions{}, []string{"clusters[x].server", `scheme "ftp"`}},
		{"bad CA PEM data", one(`{server: "https://x", certificate-authority-data: `+b64([]byte("not pem"))+`}`, "{}"),
			KubeconfigOptions{}, []string{"$FILE", "clusters[x].certificate-authority-data", "holds no PEM certificate"}},
		{"bad CA base64", one(`{server: "https://x", certificate-authority-data: "@@@"}`, "{}"),
			KubeconfigOptions{}, []string{"certificate-authority-data", "not valid base64"}},
		{"bad CA PEM file", one(`{server: "https://x", certificate-authority: "$DIR/pki/token"}`, "{}"),
			KubeconfigOptions{}, []string{"$FILE", "clusters[x].certificate-authority", "pki/token holds no PEM certificate"}},
		{"missing CA file", one(`{server: "https://x", certificate-authority: missing-ca.crt}`, "{}"),
			KubeconfigOptions{}, []string{"clusters[x].certificate-authority", "missing-ca.crt", "no such file"}},
		{"missing client certificate file", one(okCluster, `{client-certificate: nope.crt, client-key: pki/client.key}`),
			KubeconfigOptions{}, []string{"users[u].client-certificate", "nope.crt", "no such file"}},
		{"missing client key file", one(okCluster, `{client-certificate: pki/client.crt, client-key: nope.key}`),
			KubeconfigOptions{}, []string{"users[u].client-key", "nope.key", "no such file"}},
		{"key file holds no key", one(okCluster, `{client-certificate: pki/client.crt, client-key: pki/client.crt}`),
			KubeconfigOptions{}, []string{"users[u].client-key", "client.crt holds no PEM private key"}},
		{"certificate without key", one(okCluster, `{client-certificate-data: $CERT_DATA}`),
			KubeconfigOptions{}, []string{"users[u].client-key: is missing"}},
		{"mismatched key", one(okCluster, `{client-certificate-data: $CERT_DATA, client-key-data: $OTHER_KEY_DATA}`),
			KubeconfigOptions{}, []string{"users[u].client-certificate", "do not form a pair"}},
		{"missing token file", one(okCluster, `{tokenFile: no-token}`),
			KubeconfigOptions{}, []string{"users[u].tokenFile", "no-token"}},
		{"auth provider", one(okCluster, `{auth-provider: {name: gcp}}`),
			KubeconfigOptions{}, []string{"users[u].auth-provider", `auth provider "gcp" is not supported`, "exec"}},
		{"exec without apiVersion", one(okCluster, `{exec: {command: plugin}}`),
			KubeconfigOptions{}, []string{"users[u].exec", "apiVersion is empty"}},
		{"exec with old apiVersion", one(okCluster, `{exec: {command: p, apiVersion: client.authentication.k8s.io/v1alpha1}}`),
			KubeconfigOptions{}, []string{"users[u].exec", "v1alpha1"}},
		{"impersonation", one(okCluster, `{as: admin}`), KubeconfigOptions{}, []string{"users[u].as", "not supported"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newKCFixture(t, map[string]string{"k.yaml": tt.content})
			file := filepath.Join(f.dir, "k.yaml")
			opts := tt.opts
			opts.Path = file
			// Relative paths in the table are relative to k.yaml's directory.
			_, err := LoadKubeconfig(opts)
			require.Error(t, err)
			var ke *KubeconfigError
			assert.True(t, errors.As(err, &ke), "got %T, want a *KubeconfigError", err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), strings.ReplaceAll(w, "$FILE", file))
			}
		})
	}
}

func TestKubeconfigMissing(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name        string
		opts        KubeconfigOptions
		wantNoClust bool
		want        string
	}{
		{"explicit path missing", KubeconfigOptions{Path: filepath.Join(dir, "nope")}, false, "no such file"},
		{"KUBECONFIG files all missing", KubeconfigOptions{Getenv: envMap(map[string]string{"KUBECONFIG": filepath.Join(dir, "x") + string(os.PathListSeparator) + filepath.Join(dir, "y")})}, true, filepath.Join(dir, "y")},
		{"no home config", KubeconfigOptions{Getenv: envMap(nil), HomeDir: dir}, true, filepath.Join(dir, ".kube", "config")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadKubeconfig(tt.opts)
			require.Error(t, err)
			assert.Equal(t, tt.wantNoClust, errors.Is(err, ErrNoCluster), "got %v; errors.Is(ErrNoCluster) want %v", err, tt.wantNoClust)
			assert.Contains(t, err.Error(), tt.want)
			if !tt.wantNoClust {
				assert.ErrorIs(t, err, fs.ErrNotExist)
			}
		})
	}
}

func TestKubeconfigRedactsSecretsInErrors(t *testing.T) {
	cases := []string{
		"current-context: x\nusers: [{name: u, user: {token: \"tok-SECRET-1}]",
		"current-context: x\nclusters: [{name: x, cluster: {server: \"https://x\", proxy-url: \"http://u:pw-SECRET-2@%zz\"}}]\ncontexts: [{name: x, context: {cluster: x}}]",
		"current-context: x\nclusters: [{name: x, cluster: {server: \"https://x\"}}]\nusers: [{name: u, user: {client-certificate-data: " + b64([]byte("KEY-SECRET-3")) + ", client-key-data: \"KEY-SECRET-3\"}}]\ncontexts: [{name: x, context: {cluster: x, user: u}}]",
		"current-context: x\nusers: [{name: u, user: {token: 5, password: pw-SECRET-2\n  x: y}}]",
	}
	for i, content := range cases {
		dir := t.TempDir()
		_, err := LoadKubeconfig(KubeconfigOptions{Path: writeFile(t, dir, "k.yaml", content)})
		require.Error(t, err, "case %d", i)
		assertNoSecret(t, "kubeconfig error", err.Error())
	}
}

func TestDefaultConfig(t *testing.T) {
	f := newKCFixture(t, map[string]string{"home/.kube/config": kcB})
	sa := t.TempDir()
	env := inClusterEnv{
		tokenFile:     writeFile(t, sa, "token", "sa-token"),
		caFile:        writeFile(t, sa, "ca.crt", string(f.pki.caPEM)),
		namespaceFile: writeFile(t, sa, "namespace", "kube-system\n"),
	}
	inPod := map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
	tests := []struct {
		name     string
		environ  map[string]string
		opts     KubeconfigOptions
		wantHost string
		wantErr  error
	}{
		{"home kubeconfig", inPod, KubeconfigOptions{HomeDir: filepath.Join(f.dir, "home")}, "https://b.example:6443", nil},
		{"in cluster", inPod, KubeconfigOptions{HomeDir: f.dir}, "https://10.96.0.1:443", nil},
		{"nothing", nil, KubeconfigOptions{HomeDir: f.dir}, "", ErrNoCluster},
		{"explicit missing path does not fall back", inPod, KubeconfigOptions{Path: filepath.Join(f.dir, "nope")}, "", fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Getenv = envMap(tt.environ)
			e := env
			e.getenv = opts.Getenv
			c, err := defaultConfig(opts, e)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantHost, c.Host)
		})
	}
}

// fuzzReadFile stands in for the file system in the fuzz target: every
// file a fuzzed kubeconfig names is missing.
func fuzzReadFile(string) ([]byte, error) { return nil, fs.ErrNotExist }

func FuzzKubeconfig(f *testing.F) {
	for _, seed := range []string{kcA, kcB, kcC, kcRelative, "", "{}", "[]", "null", "current-context: x",
		"clusters: 5", "current-context: x\ncontexts: [{name: x, context: {cluster: x}}]\nclusters: [{name: x, cluster: {server: \"https://x\"}}]",
		"current-context: x\ncontexts: [{name: x, context: {cluster: x, user: u}}]\nclusters: [{name: x, cluster: {server: \"::\"}}]\nusers: [{name: u, user: {exec: {command: a/b, apiVersion: client.authentication.k8s.io/v1}}}]",
		"current-context: x\ncontexts: [{name: x, context: {cluster: x}}]\nclusters: [{name: x, cluster: {server: h, certificate-authority-data: \"AAAA\", proxy-url: \"socks5://p\"}}]",
		"{\"current-context\": \"x\", \"clusters\": [{\"name\": \"x\"}]}", "a: &a [*a, *a]", "\t\x00",
	} {
		f.Add([]byte(seed), "")
	}
	f.Add([]byte(kcB), "ctx-a")
	f.Fuzz(func(t *testing.T, data []byte, context string) {
		kf, err := parseKubeconfig(data)
		if err != nil {
			return
		}
		m := newKCMerged()
		m.add(filepath.Join("fuzz", "config"), kf)
		c, err := m.build(KubeconfigOptions{Context: context}, fuzzReadFile)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if c.Host == "" || c.Namespace == "" {
			t.Fatalf("got Host %q Namespace %q, want both set", c.Host, c.Namespace)
		}
		_ = c.String()
	})
}
