package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
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
	var ke *kube.KubeconfigError
	switch {
	case err == nil:
	case errors.Is(err, kube.ErrNoCluster) && c.server != "":
		cfg = &kube.Config{Namespace: namespace}
	case errors.Is(err, kube.ErrNoCluster),
		c.kubeconfig != "" && errors.Is(err, fs.ErrNotExist) && (!errors.As(err, &ke) || ke.Field == ""):
		// No kubeconfig at all, or --kubeconfig names no file: say where a
		// cluster could come from. A file the kubeconfig names (a CA)
		// being missing is that file's problem, said as it is.
		return nil, fmt.Errorf("%w; pass --kubeconfig or --server, or try --sim for a built-in simulated cluster", explainKubeconfig(err))
	default:
		return nil, explainKubeconfig(err)
	}
	if c.server != "" {
		cfg.Host = serverURL(c.server)
	}
	if c.token != "" {
		// --token replaces every credential of the kubeconfig.
		cfg.Auth = kube.AuthConfig{BearerToken: c.token, AllowInsecureToken: cfg.Auth.AllowInsecureToken}
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

// serverURL is --server as kubectl reads it: an address without a scheme
// ("127.0.0.1:8080") is plain http, even with a CA or
// --insecure-skip-tls-verify (kubectl v1.37 sends http to it alike).
func serverURL(s string) string {
	if strings.Contains(s, "://") {
		return s
	}
	return "http://" + s
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
	opts := watch.ListOptions{Limit: 1}
	wait := 200 * time.Millisecond
	for {
		_, err := watch.List[*printers.Object](ctx, t.client, t.res, scope(t, o), opts)
		if err == nil {
			return nil
		}
		if !transient(err) || ctx.Err() != nil {
			return listRefusal(ctx, err, t, o)
		}
		select {
		case <-ctx.Done():
			return listRefusal(ctx, err, t, o)
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// transient reports an error worth retrying before the first sync: a
// retryable status (429, 5xx) or a network error other than a refused
// connection or an unknown host.
func transient(err error) bool {
	if _, ok := protocolMismatch(err, "http://x"); ok {
		return false // https to plain HTTP or the other way round
	}
	var alert tls.AlertError
	if errors.As(err, &alert) {
		return false // the server refused the handshake (a client certificate)
	}
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

// scope is what the command lists and watches: the target's namespace
// and the selectors of -l, --field-selector and a single name.
func scope(t *target, o *getOptions) kube.Scope {
	return kube.Scope{Namespace: t.namespace, LabelSelector: o.selector, FieldSelector: fieldSelector(o)}
}

// fieldSelector adds metadata.name=NAME when one object was named. Several
// names are listed whole and filtered (namesOnly): a field selector cannot
// say "one of".
func fieldSelector(o *getOptions) string {
	if len(o.names) != 1 {
		return o.fieldSelector
	}
	sel := "metadata.name=" + o.names[0]
	if o.fieldSelector != "" {
		sel += "," + o.fieldSelector
	}
	return sel
}

// checkNames asks the server for each named object before anything is
// printed, as kubectl does: a missing one is kubectl's NotFound error
// (also when watching: kubectl fails before it watches), unless
// --ignore-not-found, which drops it. With every name dropped there is
// nothing to do: errNothingFound.
func checkNames(ctx context.Context, t *target, o *getOptions) error {
	if len(o.names) > 0 && t.res.Namespaced && t.namespace == "" {
		return usagef("a resource cannot be retrieved by name across all namespaces")
	}
	var missing []error
	kept := o.names[:0:0]
	for _, name := range o.names {
		err := getObject(ctx, t, name)
		switch {
		case err == nil:
			kept = append(kept, name)
		case kube.IsNotFound(err) && o.ignoreNotFound:
		case kube.IsNotFound(err):
			missing = append(missing, notFound(err, t.res, name))
		default:
			return describe(ctx, err, t.client.Host())
		}
	}
	if len(o.names) > 0 && len(kept) == 0 && len(missing) == 0 {
		return errNothingFound
	}
	o.names = kept
	if len(missing) > 0 && len(kept) == 0 {
		return errors.Join(missing...)
	}
	o.missing = missing
	return nil
}

// errNothingFound ends a command whose named objects are all missing and
// ignored (--ignore-not-found): nothing printed, exit 0.
var errNothingFound = errors.New("nothing found")

// getObject GETs one object, retrying what the probe retries.
func getObject(ctx context.Context, t *target, name string) error {
	path := objectPath(t, name)
	wait := 200 * time.Millisecond
	for {
		err := getPath(ctx, t.client, path)
		if err == nil || !transient(err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// objectPath is the object's URL path: /api/v1/namespaces/NS/pods/NAME,
// /apis/GROUP/VERSION/... .
func objectPath(t *target, name string) string {
	p := "/api/" + t.res.Version
	if t.res.Group != "" {
		p = "/apis/" + t.res.Group + "/" + t.res.Version
	}
	if t.res.Namespaced && t.namespace != "" {
		p += "/namespaces/" + url.PathEscape(t.namespace)
	}
	return p + "/" + t.res.Resource + "/" + url.PathEscape(name)
}

func getPath(ctx context.Context, c *kube.Client, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := kube.ErrorFromResponse(resp); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// describe turns a connection or server error into one line saying what
// went wrong and, where it helps, what to do.
func describe(ctx context.Context, err error, host string) error {
	if mismatch, ok := protocolMismatch(err, host); ok {
		return mismatch
	}
	if se, ok := kube.AsStatus(err); ok {
		msg := se.Message
		if msg == "" {
			msg = se.Reason
		}
		switch {
		case se.Code == 401: // kubectl's words have no hint, and come after its own log lines
			return fmt.Errorf("the server at %s refused the credentials (401 Unauthorized): check --token or the kubeconfig user", host)
		case se.Code >= 400 && se.Code < 500:
			return fromServer(se, se.Message)
		default: // a failure that outlasted the retries, not a refusal: say which server and what it answered
			return fmt.Errorf("the server at %s answered %d %s: %s", host, se.Code, se.Reason, msg)
		}
	}
	if errors.Is(err, kube.ErrInsecureCredentials) {
		return fmt.Errorf("%w: %s (use https, or a loopback address)", kube.ErrInsecureCredentials, host)
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
		return fmt.Errorf("no answer from the API server at %s in time (raise --request-timeout): %w", host, err)
	}
	if hint := certificateHint(err); hint != "" {
		return fmt.Errorf("cannot reach the API server at %s: %w (%s)", host, err, hint)
	}
	return fmt.Errorf("cannot reach the API server at %s: %w", host, err)
}

// fromServer is a refusal (4xx but 401) the server worded, as kubectl
// prints one (StandardErrorMessage): "Error from server (Reason): msg",
// or without the parentheses when the server gave no reason.
func fromServer(se *kube.StatusError, msg string) *serverError {
	if msg == "" {
		msg = fmt.Sprintf("%d %s", se.Code, http.StatusText(int(se.Code)))
	}
	if se.Reason == "" {
		return &serverError{msg: "Error from server: " + msg}
	}
	return &serverError{msg: "Error from server (" + se.Reason + "): " + msg}
}

// listRefusal is the line for a list the server refused: describe's,
// except that kubectl says which list a 400 or a 404 was about
// (cli-runtime's EnhanceListError), with the resource as a
// GroupVersionResource prints itself ("apps/v1, Resource=deployments")
// and the user's selectors. (kubectl gets named objects, and says
// nothing more of those.)
func listRefusal(ctx context.Context, err error, t *target, o *getOptions) error {
	se, ok := kube.AsStatus(err)
	_, mismatch := protocolMismatch(err, t.client.Host()) // Go's TLS server answers plain HTTP with a 400
	if !ok || mismatch || (se.Code != 400 && se.Code != 404) || len(o.names) > 0 {
		return describe(ctx, err, t.client.Host())
	}
	gvr := t.res.Group + "/" + t.res.Version + ", Resource=" + t.res.Resource
	if o.selector == "" && o.fieldSelector == "" {
		return fromServer(se, fmt.Sprintf("Unable to list %q: %s", gvr, se.Message))
	}
	return fromServer(se, fmt.Sprintf("Unable to find %q that match label selector %q, field selector %q: %s",
		gvr, o.selector, o.fieldSelector, se.Message))
}

// certificateHint says what to change when the server's certificate is not
// trusted or does not name the host.
func certificateHint(err error) string {
	var (
		verifyErr *tls.CertificateVerificationError
		authErr   x509.UnknownAuthorityError
		hostErr   x509.HostnameError
	)
	switch {
	case errors.As(err, &hostErr):
		return "the certificate does not name this host: connect by a name it has, or set the kubeconfig's clusters[].cluster.tls-server-name"
	case errors.As(err, &authErr), errors.As(err, &verifyErr):
		return "trust the server's CA with --certificate-authority or the kubeconfig's clusters[].cluster.certificate-authority(-data)," +
			" or skip verification with --insecure-skip-tls-verify"
	}
	return ""
}
