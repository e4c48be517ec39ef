package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/kwatch/kwatch/kube"
)

// Errors about the configuration name what the user can change: a flag
// ("--certificate-authority") or a kubeconfig field as the file spells it
// ("clusters[].cluster.certificate-authority" in kubeconfig "FILE"), never
// the library's Go field names ("TLS.CAFile").

// kubeconfigEntry matches the kube package's field paths, "clusters[x].server",
// whose section key ("cluster", "user", "context") the file has and the
// path leaves out.
var kubeconfigEntry = regexp.MustCompile(`^(clusters|users|contexts)\[(.*)\]\.(.+)$`)

var sectionKey = map[string]string{"clusters": "cluster", "users": "user", "contexts": "context"}

// explainKubeconfig rewrites a kubeconfig error with the field as the file
// spells it: clusters[].cluster.certificate-authority of cluster "x".
func explainKubeconfig(err error) error {
	var ke *kube.KubeconfigError
	if !errors.As(err, &ke) {
		return err
	}
	where := fmt.Sprintf("kubeconfig %q", ke.File)
	if ke.Field == "" {
		return fmt.Errorf("%s: %w", where, ke.Err)
	}
	field := ke.Field
	if m := kubeconfigEntry.FindStringSubmatch(field); m != nil {
		field = fmt.Sprintf("%s[].%s.%s of %s %q", m[1], sectionKey[m[1]], m[3], sectionKey[m[1]], m[2])
	}
	return fmt.Errorf("%s: %s: %w", where, field, ke.Err)
}

// configFields map the kube package's Config fields to the flag that sets
// each and the kubeconfig field that does.
var configFields = map[string][2]string{
	"Host":                 {"--server", "clusters[].cluster.server"},
	"TLS.CAFile":           {"--certificate-authority", "clusters[].cluster.certificate-authority"},
	"TLS.CAData":           {"--certificate-authority", "clusters[].cluster.certificate-authority-data"},
	"TLS.Insecure":         {"--insecure-skip-tls-verify", "clusters[].cluster.insecure-skip-tls-verify"},
	"TLS.CertData/KeyData": {"--client-certificate and --client-key", "users[].user.client-certificate(-data) and client-key(-data)"},
	"Auth.BearerToken":     {"--token", "users[].user.token"},
	"Auth.Username":        {"", "users[].user.username"},
	"Auth":                 {"", "users[].user (token, username and exec exclude each other)"},
	"Auth.Exec.Command":    {"", "users[].user.exec.command"},
	"Auth.Exec.APIVersion": {"", "users[].user.exec.apiVersion"},
}

// userFieldNames spell the Auth fields as a kubeconfig user does; the
// longer name first, as a Replacer tries them in order.
var userFieldNames = strings.NewReplacer("Auth.BearerTokenFile", "tokenFile", "Auth.BearerToken", "token",
	"Auth.Username", "username", "Auth.Password", "password", "Auth.Exec", "exec")

// explainConfig rewrites an error of kube.NewClient: the flag when the
// command line set the value, else the kubeconfig field.
func explainConfig(err error, c connFlags) error {
	var ce *kube.ConfigError
	if errors.As(err, &ce) {
		names, ok := configFields[ce.Field]
		if !ok {
			names = [2]string{"", "the kubeconfig's " + strings.ToLower(ce.Field)}
		}
		what := names[1] + " in the kubeconfig"
		if names[0] != "" && flagSets(c, ce.Field) {
			what = names[0]
		}
		if ce.Field == "Auth" { // the kinds of credential set, by their Go paths
			return fmt.Errorf("%s: %s", what, userFieldNames.Replace(ce.Err.Error()))
		}
		return fmt.Errorf("%s: %w", what, ce.Err)
	}
	if msg := err.Error(); strings.Contains(msg, "Config.Host") {
		what := "the kubeconfig's clusters[].cluster.server"
		if c.server != "" {
			what = "--server"
		}
		_, rest, _ := strings.Cut(msg, "Config.Host")
		return fmt.Errorf("%s%s", what, rest)
	}
	return err
}

// flagSets reports whether the command line set the Config field.
func flagSets(c connFlags, field string) bool {
	switch field {
	case "Host":
		return c.server != ""
	case "TLS.CAFile", "TLS.CAData":
		return c.caFile != ""
	case "TLS.Insecure":
		return c.insecure
	case "TLS.CertData/KeyData":
		return c.certFile != "" || c.keyFile != ""
	case "Auth.BearerToken":
		return c.token != ""
	}
	return false
}

// protocolMismatch recognizes plain HTTP sent to a TLS server (which
// answers 400 "Client sent an HTTP request to an HTTPS server") and TLS
// sent to a plain HTTP server (Go's "server gave HTTP response to HTTPS
// client"), and says which scheme works. Retrying changes neither.
func protocolMismatch(err error, host string) (error, bool) {
	u, perr := url.Parse(host)
	if perr != nil {
		return nil, false
	}
	other := *u
	if se, ok := kube.AsStatus(err); ok && se.Code == 400 && strings.Contains(se.Message+se.Reason, "HTTP request to an HTTPS server") {
		other.Scheme = "https"
		return fmt.Errorf("the server at %s speaks TLS, not plain HTTP: use %s (--server or the kubeconfig's clusters[].cluster.server)",
			host, other.String()), true
	}
	var rh tls.RecordHeaderError
	if strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") || errors.As(err, &rh) {
		other.Scheme = "http"
		return fmt.Errorf("the server at %s speaks plain HTTP, not TLS: use %s (--server or the kubeconfig's clusters[].cluster.server)",
			host, other.String()), true
	}
	return nil, false
}
