package kube

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
)

// Where a pod finds its service account, by Kubernetes convention.
const (
	serviceAccountDir      = "/var/run/secrets/kubernetes.io/serviceaccount"
	inClusterTokenFile     = serviceAccountDir + "/token"
	inClusterCAFile        = serviceAccountDir + "/ca.crt"
	inClusterNamespaceFile = serviceAccountDir + "/namespace"
)

// inClusterEnv is what InClusterConfig reads, replaceable in tests.
type inClusterEnv struct {
	getenv        func(string) string
	tokenFile     string
	caFile        string
	namespaceFile string
}

func defaultInClusterEnv() inClusterEnv {
	return inClusterEnv{getenv: os.Getenv, tokenFile: inClusterTokenFile,
		caFile: inClusterCAFile, namespaceFile: inClusterNamespaceFile}
}

// InClusterConfig is the Config of a process running in a pod: the API
// server from KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, the
// service account's CA and namespace, and its token file
// (Auth.BearerTokenFile, so a rotated token is picked up). Outside a pod
// the error wraps ErrNoCluster.
func InClusterConfig() (*Config, error) {
	return inClusterConfig(defaultInClusterEnv())
}

func inClusterAvailable(getenv func(string) string) bool {
	return getenv("KUBERNETES_SERVICE_HOST") != "" && getenv("KUBERNETES_SERVICE_PORT") != ""
}

func inClusterConfig(env inClusterEnv) (*Config, error) {
	host, port := env.getenv("KUBERNETES_SERVICE_HOST"), env.getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, fmt.Errorf("%w: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not both set", ErrNoCluster)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("in-cluster config: KUBERNETES_SERVICE_PORT %q is not a port number", port)
	}
	// An IPv6 address is bracketed by JoinHostPort; strip brackets a
	// hand-written value may already carry so they are not doubled.
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	c := &Config{Host: "https://" + net.JoinHostPort(host, port), Namespace: "default"}
	if _, err := os.Stat(env.tokenFile); err != nil {
		return nil, fmt.Errorf("in-cluster config: service account token: %w", err)
	}
	c.Auth.BearerTokenFile = env.tokenFile
	if _, err := readPEMFile(env.caFile, pemCertificate, readConfigFile); err != nil {
		return nil, fmt.Errorf("in-cluster config: service account CA: %w", err)
	}
	c.TLS.CAFile = env.caFile
	ns, err := readConfigFile(env.namespaceFile)
	switch {
	case err == nil:
		if s := strings.TrimSpace(string(ns)); s != "" {
			c.Namespace = s
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("in-cluster config: service account namespace: %w", err)
	}
	return c, nil
}

// DefaultConfig finds the cluster as kubectl does: the explicit
// opts.Path if given; else $KUBECONFIG or ~/.kube/config if one exists;
// else the in-cluster config if KUBERNETES_SERVICE_HOST and _PORT are set;
// else an error wrapping ErrNoCluster. opts.Namespace overrides the
// namespace in every case.
func DefaultConfig(opts KubeconfigOptions) (*Config, error) {
	env := defaultInClusterEnv()
	if opts.Getenv != nil {
		env.getenv = opts.Getenv
	}
	return defaultConfig(opts, env)
}

func defaultConfig(opts KubeconfigOptions, env inClusterEnv) (*Config, error) {
	c, err := LoadKubeconfig(opts)
	if opts.Path != "" || !errors.Is(err, ErrNoCluster) {
		return c, err
	}
	if !inClusterAvailable(env.getenv) {
		return nil, err
	}
	c, err = inClusterConfig(env)
	if err != nil {
		return nil, err
	}
	if opts.Namespace != "" {
		c.Namespace = opts.Namespace
	}
	return c, nil
}
