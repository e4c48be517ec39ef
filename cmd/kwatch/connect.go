package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// target is what a get command watches: a client, a resource and a
// namespace ("" for all namespaces or a cluster-scoped resource).
type target struct {
	client    *kube.Client
	res       kube.Resource
	namespace string
	// allNamespaces: the NAMESPACE column is shown.
	allNamespaces bool
}

// loadConfig finds the cluster as kubectl does and applies the command
// line's overrides.
func loadConfig(c connFlags, namespace string, e *env) (*kube.Config, error) {
	if c.insecure && c.caFile != "" {
		return nil, usagef("--certificate-authority and --insecure-skip-tls-verify exclude each other")
	}
	cfg, err := kube.DefaultConfig(kube.KubeconfigOptions{
		Path: c.kubeconfig, Context: c.context, Namespace: namespace, Getenv: e.getenv,
	})
	switch {
	case err == nil:
	case errors.Is(err, kube.ErrNoCluster) && c.server != "":
		cfg = &kube.Config{Host: c.server, Namespace: namespace}
	case errors.Is(err, kube.ErrNoCluster), c.kubeconfig != "" && errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w; pass --kubeconfig or --server, or try --sim for a built-in simulated cluster", err)
	default:
		return nil, err
	}
	if c.server != "" {
		cfg.Host = c.server
	}
	if c.token != "" {
		cfg.BearerToken, cfg.BearerTokenFile = c.token, ""
		cfg.Username, cfg.Password, cfg.Exec = "", "", nil
	}
	if c.caFile != "" {
		cfg.TLS.CAFile, cfg.TLS.CAData = c.caFile, nil
	}
	if c.certFile != "" {
		cfg.TLS.CertFile, cfg.TLS.CertData = c.certFile, nil
	}
	if c.keyFile != "" {
		cfg.TLS.KeyFile, cfg.TLS.KeyData = c.keyFile, nil
	}
	if c.insecure {
		cfg.TLS.Insecure, cfg.TLS.CAFile, cfg.TLS.CAData = true, "", nil
	}
	return cfg, nil
}

// resolve finds the resource the user named. Pods need no discovery.
func resolve(ctx context.Context, c *kube.Client, name string) (kube.Resource, error) {
	switch strings.ToLower(name) {
	case "pods", "pod", "po":
		return kube.Pods, nil
	}
	res, err := c.Resolve(ctx, name)
	if err != nil {
		var unknown *kube.UnknownResourceError
		if errors.As(err, &unknown) {
			return res, err
		}
		return res, describe(ctx, err, c.Host())
	}
	if len(res.Verbs) > 0 && (!slices.Contains(res.Verbs, "list") || !slices.Contains(res.Verbs, "watch")) {
		return res, fmt.Errorf("resource %s cannot be listed and watched (verbs: %s)", res, strings.Join(res.Verbs, ", "))
	}
	return res, nil
}

// probe lists one object with the command's selectors before the informer
// starts, which retries everything forever: a refusal (401, 403, 404, a bad
// selector) ends the command at once with the server's reason, and an
// unreachable or failing server ends it after ctx's deadline. Refused
// connections and unknown hosts are final at once.
func probe(ctx context.Context, t *target, o *getOptions) error {
	opts := watch.ListOptions{Limit: 1, LabelSelector: o.selector, FieldSelector: fieldSelector(o)}
	wait := 200 * time.Millisecond
	for {
		_, err := watch.List[*printers.Object](ctx, t.client, t.res, t.namespace, opts)
		if err == nil {
			return nil
		}
		if !transient(err) || ctx.Err() != nil {
			return describe(ctx, err, t.client.Host())
		}
		select {
		case <-ctx.Done():
			return describe(ctx, err, t.client.Host())
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// transient reports an error worth retrying before the first sync: a
// retryable status (429, 5xx) or a network error other than a refused
// connection or an unknown host.
func transient(err error) bool {
	if se, ok := kube.AsStatus(err); ok {
		return kube.IsRetryable(se)
	}
	var (
		dnsErr    *net.DNSError
		verifyErr *tls.CertificateVerificationError
		authErr   x509.UnknownAuthorityError
		hostErr   x509.HostnameError
	)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return false
	case errors.As(err, &verifyErr), errors.As(err, &authErr), errors.As(err, &hostErr):
		return false // a certificate does not fix itself
	case errors.Is(err, kube.ErrInsecureCredentials):
		return false
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr)
}

// fieldSelector adds metadata.name=NAME when an object was named.
func fieldSelector(o *getOptions) string {
	if o.name == "" {
		return o.fieldSelector
	}
	sel := "metadata.name=" + o.name
	if o.fieldSelector != "" {
		sel += "," + o.fieldSelector
	}
	return sel
}

// describe turns a connection or server error into one line saying what
// went wrong and, where it helps, what to do.
func describe(ctx context.Context, err error, host string) error {
	if se, ok := kube.AsStatus(err); ok {
		msg := se.Message
		if msg == "" {
			msg = se.Reason
		}
		switch se.Code {
		case 401:
			return fmt.Errorf("the server at %s refused the credentials (401 Unauthorized): check --token or the kubeconfig user", host)
		case 403:
			return fmt.Errorf("forbidden (403): %s", msg)
		case 404:
			return fmt.Errorf("not found (404): %s", msg)
		default:
			return fmt.Errorf("the server at %s answered %d %s: %s", host, se.Code, se.Reason, msg)
		}
	}
	if errors.Is(err, kube.ErrInsecureCredentials) {
		return fmt.Errorf("%w: %s (use https, or a loopback address)", kube.ErrInsecureCredentials, host)
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("no answer from the API server at %s in time (raise --request-timeout): %w", host, err)
	}
	return fmt.Errorf("cannot reach the API server at %s: %w", host, err)
}
