package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// TestServerWithoutScheme: -s 127.0.0.1:PORT is plain http, as kubectl
// v1.37 sends it (also with a CA or --insecure-skip-tls-verify).
func TestServerWithoutScheme(t *testing.T) {
	h, _ := demo(t, sim.Options{})
	addr := strings.TrimPrefix(h.URL, "http://")
	r := kwatch(t, testEnv(t), "pods", "-n", "demo", "-s", addr, "--watch=false", "-o", "name")
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Equal(t, "pod/db-0\npod/web-1\npod/web-2\n", r.stdout)
}

// TestProtocolMismatch: TLS spoken to a plain HTTP server, or plain HTTP
// to a TLS one, is one line naming the scheme that works, at once (the
// default --request-timeout of 30s would otherwise be the wait).
func TestProtocolMismatch(t *testing.T) {
	plain := simkit.Start(t, sim.Options{})
	tlsSrv := simkit.Start(t, sim.Options{TLS: true})
	plainAddr := strings.TrimPrefix(plain.URL, "http://")
	tlsAddr := strings.TrimPrefix(tlsSrv.URL, "https://")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"https to plain", []string{"pods", "-s", "https://" + plainAddr, "--insecure-skip-tls-verify"},
			[]string{"speaks plain HTTP, not TLS", "use http://" + plainAddr}},
		{"http to TLS", []string{"pods", "-s", "http://" + tlsAddr}, []string{"speaks TLS, not plain HTTP", "use https://" + tlsAddr}},
		{"no scheme to TLS", []string{"deploy", "-s", tlsAddr}, []string{"speaks TLS", "use https://" + tlsAddr}},
		{"an untrusted certificate", []string{"pods", "-s", tlsSrv.URL}, []string{"certificate signed by unknown authority",
			"--certificate-authority", "--insecure-skip-tls-verify"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireOneLineError(t, kwatch(t, testEnv(t), tt.args...), tt.want...)
		})
	}
}

// TestConfigErrorsNameFlagsAndFields: errors say the flag or the
// kubeconfig field, never the library's Go field names, and a kubeconfig
// whose CA file is missing is not told to pass --kubeconfig.
func TestConfigErrorsNameFlagsAndFields(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-ca.crt")
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: `+missing+`
contexts:
- name: prod
  context: {cluster: prod, user: me}
current-context: prod
users:
- name: me
  user: {}
`), 0o600))
	twoCreds := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(twoCreds, []byte(`apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster: {server: "https://127.0.0.1:6443"}
contexts:
- name: prod
  context: {cluster: prod, user: me}
current-context: prod
users:
- name: me
  user: {token: t, username: u}
`), 0o600))
	tests := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"a kubeconfig user with two kinds of credential", []string{"pods", "--kubeconfig", twoCreds},
			[]string{"users[].user", "token and username are both set"}, []string{"Auth.", "config "}},
		{"--certificate-authority names a missing file", []string{"pods", "-s", "https://127.0.0.1:6443", "--certificate-authority", missing},
			[]string{"--certificate-authority", missing}, []string{"TLS.", "config "}},
		{"the kubeconfig's CA file is missing", []string{"pods", "--kubeconfig", kc},
			[]string{`kubeconfig "` + kc + `"`, `clusters[].cluster.certificate-authority of cluster "prod"`, missing},
			[]string{"--kubeconfig", "TLS."}},
		{"a bad --server", []string{"pods", "-s", "ftp://x"}, []string{"--server"}, []string{"Config.Host", "kube:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := kwatch(t, testEnv(t), tt.args...)
			requireOneLineError(t, r, tt.want...)
			for _, n := range tt.not {
				require.NotContains(t, r.stderr, n)
			}
		})
	}
}

// TestVerboseRequestLines: -v=6 logs each request as kubectl does, one
// line with the method, URL, status and time.
func TestVerboseRequestLines(t *testing.T) {
	_, kc := demo(t, sim.Options{})
	r := kwatch(t, testEnv(t), "pods", "-n", "demo", "--watch=false", "-o", "name", "-v=6", "--kubeconfig", kc)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Regexp(t, regexp.MustCompile(`(?m)^GET http://127\.0\.0\.1:\d+/api/v1/namespaces/demo/pods\?\S*limit=1\S* 200 OK in \d+ milliseconds$`), r.stderr)
	r = kwatch(t, testEnv(t), "pods", "-n", "demo", "--watch=false", "-o", "name", "-v=5", "--kubeconfig", kc)
	require.NotContains(t, r.stderr, "GET http", "request lines start at 6")
}

func TestRequestTimeoutForms(t *testing.T) {
	_, kc := demo(t, sim.Options{})
	for _, v := range []string{"3", "0", "1m", "500ms"} {
		r := kwatch(t, testEnv(t), "pods", "-n", "demo", "--watch=false", "-o", "name", "--request-timeout", v, "--kubeconfig", kc)
		require.Equal(t, 0, r.code, "--request-timeout %s: %s", v, r.stderr)
	}
	r := kwatch(t, testEnv(t), "pods", "--request-timeout", "soon")
	requireOneLineError(t, r, "--request-timeout", "whole number of seconds")
	require.Equal(t, exitUsage, r.code)
}

// TestCompletion: the shells' scripts, and the completions they ask
// kwatch for: resource types from discovery, object names, namespaces.
func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{"bash": "__start_kwatch", "zsh": "#compdef kwatch", "fish": "complete -c kwatch",
		"powershell": "Register-ArgumentCompleter"} {
		r := kwatch(t, testEnv(t), "completion", shell)
		require.Equal(t, 0, r.code, "%s: %s", shell, r.stderr)
		require.Contains(t, r.stdout, want, shell)
	}
	_, kc := demo(t, sim.Options{})
	complete := func(args ...string) []string {
		t.Helper()
		r := kwatch(t, testEnv(t), append([]string{"__complete"}, args...)...)
		require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		return lines[:len(lines)-1] // the last line is the directive
	}
	require.Subset(t, complete("get", "--kubeconfig", kc, ""), []string{"pods", "configmaps", "deployments.apps", "namespaces"})
	require.Subset(t, complete("--kubeconfig", kc, "pods,"), []string{"pods,configmaps"}, "after a comma")
	require.Equal(t, []string{"deployments.apps"}, complete("get", "--kubeconfig", kc, "de"), "only what starts with the word")
	require.Equal(t, []string{"pods,deployments.apps"}, complete("get", "--kubeconfig", kc, "pods,de"), "after a comma, by the word's last part")
	require.Equal(t, []string{"db-0", "web-1", "web-2"}, complete("pods", "-n", "demo", "--kubeconfig", kc, ""), "names, through the shortcut")
	require.Equal(t, []string{"web-1", "web-2"}, complete("pods", "-n", "demo", "--kubeconfig", kc, "we"), "names by prefix")
	require.Subset(t, complete("get", "pods", "--kubeconfig", kc, "-n", ""), []string{"demo", "other"})
	require.Equal(t, []string{"other"}, complete("get", "pods", "--kubeconfig", kc, "-n", "o"), "namespaces by prefix")
	require.Equal(t, []string{"json", "jsonpath=", "jsonpath-file="}, complete("get", "pods", "-o", "j"), "formats by prefix")
	r := kwatch(t, testEnv(t, "KUBECONFIG="+kc), "__complete", "")
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	for _, want := range []string{"get\t", "sim\t", "completion\t", "pods\n", "deployments.apps\n"} {
		require.Contains(t, r.stdout, want, "commands and types at the root")
	}
}

func TestHelpGet(t *testing.T) {
	for _, args := range [][]string{{"help", "get"}, {"get", "-h"}, {"pods", "--help"}} {
		r := kwatch(t, testEnv(t), args...)
		require.Equal(t, 0, r.code, "%q", args)
		for _, want := range []string{"Usage:", "kwatch [get] TYPE [NAME...]", "--sort-by", "--output-watch-events", "-L, --label-columns",
			"--diff ", "--diff-noise", "--drop-managed-fields", "spec.replicas", "Enter opens"} {
			require.Contains(t, r.stdout, want, "%q", args)
		}
	}
}

// TestTemplateErrors: a missing field with --allow-missing-template-keys=false
// fails as kubectl fails (exit 1, the field named); a template flag without
// a template is a usage error.
func TestTemplateErrors(t *testing.T) {
	_, kc := demo(t, sim.Options{})
	r := kwatch(t, testEnv(t), "pods", "-n", "demo", "--watch=false", "--kubeconfig", kc,
		"-o", "jsonpath={.items[*].spec.nothing}", "--allow-missing-template-keys=false")
	require.Equal(t, exitError, r.code, "stderr: %s", r.stderr)
	require.Contains(t, r.stderr, `error executing jsonpath "{.items[*].spec.nothing}": nothing is not found`)
	r = kwatch(t, testEnv(t), "pods", "-n", "demo", "--watch=false", "--kubeconfig", kc, "-o", "jsonpath={.items[*].spec.nothing}")
	require.Equal(t, 0, r.code, "missing keys are allowed by default: %s", r.stderr)
	require.Empty(t, r.stdout)
	for _, args := range [][]string{{"-o", "jsonpath"}, {"-o", "custom-columns="}, {"-o", "jsonpath={.a"}, {"-o", "custom-columns=NAME"},
		{"--sort-by", "{.a"}} {
		// No server: a bad template is refused before connecting.
		r = kwatch(t, testEnv(t), append([]string{"pods", "--watch=false", "-s", "http://192.0.2.1:1"}, args...)...)
		require.Equal(t, exitUsage, r.code, "%q: %s", args, r.stderr)
	}
}

// TestChunkSize: --chunk-size makes the informer list in pages (not as a
// stream) of that size. Its first list asks for resourceVersion "0",
// which the server answers whole from its cache (the real server ignores
// limit there, list-pods-rv0-limit2.json), so the output is kubectl's and
// the list requests are the probe's and that one.
func TestChunkSize(t *testing.T) {
	h, kc := demo(t, sim.Options{})
	_, err := h.Server.PutPod(sim.Pod{Namespace: "demo", Name: "web-3"})
	require.NoError(t, err)
	before := h.Server.Stats().ByResource["pods"]
	r := kwatch(t, testEnv(t), "pods", "-n", "demo", "--watch=false", "-o", "name", "--chunk-size=2", "--kubeconfig", kc)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Equal(t, "pod/db-0\npod/web-1\npod/web-2\npod/web-3\n", r.stdout)
	after := h.Server.Stats().ByResource["pods"]
	require.EqualValues(t, 2, after.List-before.List, "the probe, then a list (a streaming list would be a watch)")
}
