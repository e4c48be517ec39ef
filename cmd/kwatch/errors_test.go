package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// requireOneLineError checks a failed run: a non-zero status, nothing on
// stdout, one line on stderr containing each of want, and no stack trace.
func requireOneLineError(t *testing.T, r result, want ...string) {
	t.Helper()
	require.NotEqual(t, 0, r.code, "a failure exits non-zero; stdout: %s", r.stdout)
	require.Empty(t, r.stdout)
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	require.Len(t, lines, 1, "one line on stderr, got:\n%s", r.stderr)
	// kwatch's prefix, or kubectl's where the words are kubectl's (its
	// own, or a server's refusal).
	require.True(t, strings.HasPrefix(lines[0], "kwatch: ") || strings.HasPrefix(lines[0], "error: ") ||
		strings.HasPrefix(lines[0], "Error from server "), "got %q", lines[0])
	for _, w := range want {
		require.Contains(t, lines[0], w)
	}
	require.NotContains(t, r.stderr, "goroutine ", "no stack trace")
}

func TestUnknownResource(t *testing.T) {
	_, kc := demo(t, sim.Options{})
	r := kwatch(t, testEnv(t), "get", "flunders", "--kubeconfig", kc)
	requireOneLineError(t, r, `doesn't have a resource type "flunders"`)
}

func TestNoCluster(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	tests := []struct {
		name string
		env  []string
		args []string
	}{
		{"KUBECONFIG names a missing file", testEnv(t, "KUBECONFIG="+missing), []string{"pods"}},
		{"empty HOME and no KUBECONFIG", append(testEnv(t), "HOME="), []string{"pods"}},
		{"--kubeconfig names a missing file", testEnv(t), []string{"pods", "--kubeconfig", missing}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireOneLineError(t, kwatch(t, tt.env, tt.args...), "--sim")
		})
	}
}

func TestRefusedCredentials(t *testing.T) {
	h := simkit.Start(t, sim.Options{BearerToken: "right-token"})
	wrong := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(wrong, sim.KubeconfigBytes(h.URL, nil, "wrong-token"), 0o600))
	t.Run("kubeconfig with a wrong token", func(t *testing.T) {
		requireOneLineError(t, kwatch(t, testEnv(t), "pods", "--kubeconfig", wrong), "401")
	})
	t.Run("--server and --token", func(t *testing.T) {
		requireOneLineError(t, kwatch(t, testEnv(t), "pods", "-s", h.URL, "--token", "nope"), "401")
	})
	t.Run("no token at all", func(t *testing.T) {
		requireOneLineError(t, kwatch(t, testEnv(t), "deploy", "-s", h.URL), "401")
	})
	t.Run("--token overrides the kubeconfig's", func(t *testing.T) {
		r := kwatch(t, testEnv(t), "pods", "--kubeconfig", wrong, "--token", "right-token", "--watch=false")
		require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	})
}

func TestServerRefusals(t *testing.T) {
	_, kc := demo(t, sim.Options{})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad label selector", []string{"pods", "-l", "app in (", "--kubeconfig", kc}, "Error from server (BadRequest): "},
		{"unsupported field selector", []string{"pods", "--field-selector", "spec.nope=x", "--kubeconfig", kc}, "Error from server (BadRequest): "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireOneLineError(t, kwatch(t, testEnv(t), tt.args...), tt.want)
		})
	}
}

func TestUnreachableServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	r := kwatch(t, testEnv(t), "pods", "-s", "http://"+addr, "--request-timeout", "10s")
	requireOneLineError(t, r, "cannot reach the API server", addr)
}

func TestBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown long flag", []string{"pods", "--bogus"}, "unknown flag --bogus"},
		{"unknown short flag", []string{"pods", "-Z"}, "unknown flag -Z"},
		{"missing value", []string{"pods", "-n"}, "flag -n needs a value"},
		{"bad output", []string{"pods", "-o", "xml"}, `error: unable to match a printer suitable for the output format "xml"`},
		{"bad bool", []string{"pods", "--watch=maybe"}, "watch"},
		{"bad duration", []string{"pods", "--request-timeout", "soon"}, "request-timeout"},
		{"no resource", []string{"-n", "demo"}, "name a resource"},
		{"several names while watching", []string{"pods", "a", "b"}, "you may only watch a single resource"},
		{"namespace and all", []string{"pods", "-A", "-n", "x"}, "exclude each other"},
		{"sim with a server", []string{"pods", "--sim", "-s", "http://x"}, "--sim"},
		{"sim command argument", []string{"sim", "extra"}, "no arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := kwatch(t, testEnv(t), tt.args...)
			requireOneLineError(t, r, tt.want)
			require.Equal(t, exitUsage, r.code)
		})
	}
}

// TestServerNotAnswering: a server that stalls or keeps failing before the
// first list ends the command after --request-timeout, saying why.
func TestServerNotAnswering(t *testing.T) {
	tests := []struct {
		name  string
		fault sim.Fault
		want  string
	}{
		{"stalled lists", sim.Fault{Type: sim.FaultStall, Match: "list", Count: -1}, "raise --request-timeout"},
		{"failing lists", sim.Fault{Type: sim.FaultError, Match: "list", Code: 503, Count: -1}, "503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, kc := demo(t, sim.Options{})
			require.NoError(t, h.Server.InjectFault(tt.fault))
			r := kwatch(t, testEnv(t), "pods", "--request-timeout", "2s", "--kubeconfig", kc)
			requireOneLineError(t, r, tt.want)
		})
	}
}

func TestPlainHTTPTokenToRemoteHost(t *testing.T) {
	r := kwatch(t, testEnv(t), "pods", "-s", "http://192.0.2.1:6443", "--token", "t", "--request-timeout", "5s")
	requireOneLineError(t, r, "refusing to send credentials")
}
