package kube

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// ErrNoCluster says there is nothing to connect to: no kubeconfig file exists
// and the process is not running inside a cluster. It is returned wrapped;
// test it with errors.Is. A CLI can answer it by suggesting a simulated
// cluster.
var ErrNoCluster = errors.New("no cluster configured: no kubeconfig file found and not running inside a cluster")

// KubeconfigOptions chooses which kubeconfig to read and how to use it, like
// kubectl's --kubeconfig, --context and --namespace flags. The zero value
// reads $KUBECONFIG (several files merged) or else ~/.kube/config, and uses
// its current-context.
type KubeconfigOptions struct {
	// Path is an explicit kubeconfig file (--kubeconfig): only this file is
	// read, nothing is merged, and it must exist. "" means $KUBECONFIG, then
	// ~/.kube/config.
	Path string
	// Context overrides the kubeconfig's current-context. "" keeps it.
	Context string
	// Namespace overrides the context's namespace. "" keeps it; a context
	// without one gives "default".
	Namespace string
	// Getenv reads the environment (KUBECONFIG). nil means os.Getenv.
	Getenv func(string) string
	// HomeDir is where .kube/config is looked for. "" means os.UserHomeDir.
	HomeDir string
}

func (o KubeconfigOptions) getenv(key string) string {
	if o.Getenv == nil {
		return os.Getenv(key)
	}
	return o.Getenv(key)
}

// KubeconfigError says which kubeconfig file and which field of it is wrong.
type KubeconfigError struct {
	// File is the kubeconfig file; for an error about the merged view of
	// several files (no such context) it lists them all, comma-separated.
	File string
	// Field names the entry: "current-context", "contexts[prod].cluster",
	// "users[alice].client-key-data". Empty when the whole file is at fault.
	Field string
	Err   error
}

func (e *KubeconfigError) Error() string {
	if e.Field == "" {
		return "kubeconfig " + e.File + ": " + e.Err.Error()
	}
	return "kubeconfig " + e.File + ": " + e.Field + ": " + e.Err.Error()
}

func (e *KubeconfigError) Unwrap() error { return e.Err }

// LoadKubeconfig reads kubeconfig as kubectl does and returns the Config of
// the chosen context.
//
// Without opts.Path, every file named in $KUBECONFIG (separated by
// os.PathListSeparator; missing ones skipped) is merged: the first file to
// define a cluster, user or context of a given name wins, and the first
// non-empty current-context wins. Without $KUBECONFIG, ~/.kube/config is
// read. When no file exists at all the error wraps ErrNoCluster. Relative
// paths inside a file resolve against that file's directory. Certificates,
// keys and token files are checked now, so a broken one is reported with its
// file and field rather than at the first request.
func LoadKubeconfig(opts KubeconfigOptions) (*Config, error) {
	paths, explicit := kubeconfigPaths(opts)
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w (KUBECONFIG is empty and the home directory is unknown)", ErrNoCluster)
	}
	m := newKCMerged()
	for _, p := range paths {
		data, err := readConfigFile(p)
		if err != nil {
			if !explicit && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			// The path is already in the KubeconfigError; keep the cause only.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, &KubeconfigError{File: p, Err: err}
		}
		f, err := parseKubeconfig(data)
		if err != nil {
			return nil, &KubeconfigError{File: p, Err: err}
		}
		m.add(p, f)
	}
	if len(m.files) == 0 {
		return nil, fmt.Errorf("%w (looked for %s)", ErrNoCluster, strings.Join(paths, ", "))
	}
	return m.build(opts, readConfigFile)
}

// kubeconfigPaths lists the files to read and whether they were asked for
// explicitly (then a missing one is an error).
func kubeconfigPaths(opts KubeconfigOptions) ([]string, bool) {
	if opts.Path != "" {
		return []string{opts.Path}, true
	}
	if env := opts.getenv("KUBECONFIG"); env != "" {
		var paths []string
		for _, p := range filepath.SplitList(env) {
			if p != "" && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
		return paths, false
	}
	home := opts.HomeDir
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return nil, false
		}
		home = h
	}
	return []string{filepath.Join(home, ".kube", "config")}, false
}

// The kubeconfig shapes: only the fields kwatch reads. Unknown fields are
// ignored, as kubectl ignores them.
type kcFile struct {
	CurrentContext string           `json:"current-context"`
	Clusters       []kcNamedCluster `json:"clusters"`
	Users          []kcNamedUser    `json:"users"`
	Contexts       []kcNamedContext `json:"contexts"`
}

type kcNamedCluster struct {
	Name    string    `json:"name"`
	Cluster kcCluster `json:"cluster"`
}

type kcCluster struct {
	Server                   string `json:"server"`
	CertificateAuthority     string `json:"certificate-authority"`
	CertificateAuthorityData string `json:"certificate-authority-data"`
	InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify"`
	TLSServerName            string `json:"tls-server-name"`
	ProxyURL                 string `json:"proxy-url"`
}

type kcNamedUser struct {
	Name string `json:"name"`
	User kcUser `json:"user"`
}

type kcUser struct {
	Token                 string          `json:"token"`
	TokenFile             string          `json:"tokenFile"`
	ClientCertificate     string          `json:"client-certificate"`
	ClientCertificateData string          `json:"client-certificate-data"`
	ClientKey             string          `json:"client-key"`
	ClientKeyData         string          `json:"client-key-data"`
	Username              string          `json:"username"`
	Password              string          `json:"password"`
	Exec                  *kcExec         `json:"exec"`
	AuthProvider          *kcAuthProvider `json:"auth-provider"`
	As                    string          `json:"as"`
	AsGroups              []string        `json:"as-groups"`
	AsUID                 string          `json:"as-uid"`
}

type kcAuthProvider struct {
	Name string `json:"name"`
}

type kcExec struct {
	Command            string      `json:"command"`
	Args               []string    `json:"args"`
	Env                []kcExecEnv `json:"env"`
	APIVersion         string      `json:"apiVersion"`
	InstallHint        string      `json:"installHint"`
	ProvideClusterInfo bool        `json:"provideClusterInfo"`
	InteractiveMode    string      `json:"interactiveMode"`
}

type kcExecEnv struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type kcNamedContext struct {
	Name    string    `json:"name"`
	Context kcContext `json:"context"`
}

type kcContext struct {
	Cluster   string `json:"cluster"`
	User      string `json:"user"`
	Namespace string `json:"namespace"`
}

// parseKubeconfig parses one file's bytes. YAML and JSON both work.
func parseKubeconfig(data []byte) (*kcFile, error) {
	var f kcFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a valid kubeconfig: %w", err)
	}
	return &f, nil
}

// sourced is a kubeconfig entry with the file that defined it.
type sourced[T any] struct {
	file string
	v    T
}

// kcMerged is the merged view of several kubeconfig files. Invariant: an
// entry, once set, is never replaced (the first file wins).
type kcMerged struct {
	files              []string
	currentContext     string
	currentContextFile string
	clusters           map[string]sourced[kcCluster]
	users              map[string]sourced[kcUser]
	contexts           map[string]sourced[kcContext]
}

func newKCMerged() *kcMerged {
	return &kcMerged{
		clusters: map[string]sourced[kcCluster]{},
		users:    map[string]sourced[kcUser]{},
		contexts: map[string]sourced[kcContext]{},
	}
}

// add merges file f, read from path, under the first-wins rule, resolving
// its relative paths against path's directory.
func (m *kcMerged) add(path string, f *kcFile) {
	m.files = append(m.files, path)
	dir := filepath.Dir(path)
	if m.currentContext == "" && f.CurrentContext != "" {
		m.currentContext, m.currentContextFile = f.CurrentContext, path
	}
	for _, c := range f.Clusters {
		if _, ok := m.clusters[c.Name]; !ok {
			c.Cluster.CertificateAuthority = resolvePath(dir, c.Cluster.CertificateAuthority)
			m.clusters[c.Name] = sourced[kcCluster]{path, c.Cluster}
		}
	}
	for _, u := range f.Users {
		if _, ok := m.users[u.Name]; !ok {
			u.User.resolvePaths(dir)
			m.users[u.Name] = sourced[kcUser]{path, u.User}
		}
	}
	for _, c := range f.Contexts {
		if _, ok := m.contexts[c.Name]; !ok {
			m.contexts[c.Name] = sourced[kcContext]{path, c.Context}
		}
	}
}

func (u *kcUser) resolvePaths(dir string) {
	u.TokenFile = resolvePath(dir, u.TokenFile)
	u.ClientCertificate = resolvePath(dir, u.ClientCertificate)
	u.ClientKey = resolvePath(dir, u.ClientKey)
	// A bare command name is looked up in PATH; one with a separator in it
	// is a path, relative to the kubeconfig as the other paths are.
	if u.Exec != nil && strings.ContainsRune(u.Exec.Command, filepath.Separator) {
		u.Exec.Command = resolvePath(dir, u.Exec.Command)
	}
}

func resolvePath(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// build turns the chosen context of the merged view into a Config.
// readFile reads the files the kubeconfig names.
func (m *kcMerged) build(opts KubeconfigOptions, readFile func(string) ([]byte, error)) (*Config, error) {
	all := strings.Join(m.files, ", ")
	name := opts.Context
	if name == "" {
		name = m.currentContext
	}
	if name == "" {
		return nil, &KubeconfigError{File: all, Field: "current-context",
			Err: errors.New("not set, and no context was chosen (--context)")}
	}
	ctx, ok := m.contexts[name]
	if !ok {
		return nil, &KubeconfigError{File: all, Field: "contexts",
			Err: fmt.Errorf("no context named %q (known: %s)", name, knownNames(m.contexts))}
	}
	field := "contexts[" + name + "]"
	if ctx.v.Cluster == "" {
		return nil, &KubeconfigError{File: ctx.file, Field: field + ".cluster", Err: errors.New("is empty")}
	}
	cl, ok := m.clusters[ctx.v.Cluster]
	if !ok {
		return nil, &KubeconfigError{File: ctx.file, Field: field + ".cluster",
			Err: fmt.Errorf("names cluster %q, which no kubeconfig file defines (known: %s)", ctx.v.Cluster, knownNames(m.clusters))}
	}
	c := &Config{Namespace: firstNonEmpty(opts.Namespace, ctx.v.Namespace, "default")}
	if err := applyCluster(c, ctx.v.Cluster, cl, readFile); err != nil {
		return nil, err
	}
	if ctx.v.User == "" {
		return c, nil
	}
	u, ok := m.users[ctx.v.User]
	if !ok {
		return nil, &KubeconfigError{File: ctx.file, Field: field + ".user",
			Err: fmt.Errorf("names user %q, which no kubeconfig file defines (known: %s)", ctx.v.User, knownNames(m.users))}
	}
	if err := applyUser(c, ctx.v.User, u, readFile); err != nil {
		return nil, err
	}
	return c, nil
}

// knownNames lists at most 10 names of a map, sorted, for an error message.
func knownNames[T any](m map[string]T) string {
	if len(m) == 0 {
		return "none"
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, fmt.Sprintf("%q", k))
	}
	slices.Sort(names)
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + fmt.Sprintf(" and %d more", len(names)-10)
	}
	return strings.Join(names, ", ")
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func applyCluster(c *Config, name string, cl sourced[kcCluster], readFile func(string) ([]byte, error)) error {
	field := "clusters[" + name + "]."
	fail := func(f string, err error) error {
		return &KubeconfigError{File: cl.file, Field: field + f, Err: err}
	}
	host, err := normalizeServer(cl.v.Server)
	if err != nil {
		return fail("server", err)
	}
	c.Host = host
	c.TLS.Insecure = cl.v.InsecureSkipTLSVerify
	c.TLS.ServerName = cl.v.TLSServerName
	switch {
	case cl.v.CertificateAuthorityData != "":
		pemData, err := decodeBase64PEM(cl.v.CertificateAuthorityData, pemCertificate)
		if err != nil {
			return fail("certificate-authority-data", err)
		}
		c.TLS.CAData = pemData
	case cl.v.CertificateAuthority != "":
		if _, err := readPEMFile(cl.v.CertificateAuthority, pemCertificate, readFile); err != nil {
			return fail("certificate-authority", err)
		}
		c.TLS.CAFile = cl.v.CertificateAuthority
	}
	if cl.v.ProxyURL != "" {
		u, err := parseProxyURL(cl.v.ProxyURL)
		if err != nil {
			return fail("proxy-url", err)
		}
		c.HTTP.Proxy = http.ProxyURL(u)
	}
	return nil
}

// normalizeServer checks a cluster's server URL (see parseServer). Like
// kubectl, a server without a scheme ("10.0.0.1:6443") means https.
func normalizeServer(s string) (string, error) {
	if _, err := parseServer(s); err != nil {
		return "", err
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	return s, nil
}

func parseProxyURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		// url.Parse's error quotes the input, which may hold a password.
		return nil, errors.New("is not a valid URL")
	}
	switch u.Scheme {
	case "http", "https", "socks5":
	default:
		return nil, fmt.Errorf("has scheme %q; want http, https or socks5", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("has no host")
	}
	return u, nil
}

func applyUser(c *Config, name string, u sourced[kcUser], readFile func(string) ([]byte, error)) error {
	field := "users[" + name + "]."
	fail := func(f string, err error) error {
		return &KubeconfigError{File: u.file, Field: field + f, Err: err}
	}
	v := u.v
	if v.AuthProvider != nil {
		return fail("auth-provider", fmt.Errorf("auth provider %q is not supported; configure an exec credential plugin instead", v.AuthProvider.Name))
	}
	if v.As != "" || len(v.AsGroups) > 0 || v.AsUID != "" {
		return fail("as", errors.New("impersonation is not supported"))
	}
	c.Auth.BearerToken = v.Token
	if v.TokenFile != "" {
		if _, err := readFile(v.TokenFile); err != nil {
			return fail("tokenFile", err)
		}
		c.Auth.BearerTokenFile = v.TokenFile
	}
	c.Auth.Username, c.Auth.Password = v.Username, v.Password
	if err := applyClientCert(c, v, fail, readFile); err != nil {
		return err
	}
	if v.Exec != nil {
		e, err := execFromKubeconfig(v.Exec)
		if err != nil {
			return fail("exec", err)
		}
		c.Auth.Exec = e
	}
	return nil
}

func applyClientCert(c *Config, v kcUser, fail func(string, error) error, readFile func(string) ([]byte, error)) error {
	var err error
	switch {
	case v.ClientCertificateData != "":
		if c.TLS.CertData, err = decodeBase64PEM(v.ClientCertificateData, pemCertificate); err != nil {
			return fail("client-certificate-data", err)
		}
	case v.ClientCertificate != "":
		if _, err = readPEMFile(v.ClientCertificate, pemCertificate, readFile); err != nil {
			return fail("client-certificate", err)
		}
		c.TLS.CertFile = v.ClientCertificate
	}
	switch {
	case v.ClientKeyData != "":
		if c.TLS.KeyData, err = decodeBase64PEM(v.ClientKeyData, pemPrivateKey); err != nil {
			return fail("client-key-data", err)
		}
	case v.ClientKey != "":
		if _, err = readPEMFile(v.ClientKey, pemPrivateKey, readFile); err != nil {
			return fail("client-key", err)
		}
		c.TLS.KeyFile = v.ClientKey
	}
	hasCert := c.TLS.CertData != nil || c.TLS.CertFile != ""
	hasKey := c.TLS.KeyData != nil || c.TLS.KeyFile != ""
	switch {
	case hasCert && !hasKey:
		return fail("client-key", errors.New("is missing: client-certificate is set without a key"))
	case hasKey && !hasCert:
		return fail("client-certificate", errors.New("is missing: client-key is set without a certificate"))
	case hasCert:
		if _, err := c.TLS.clientCertificate(readFile); err != nil {
			return fail("client-certificate", err)
		}
	}
	return nil
}
