package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerAddressWithCredentialsIsRefused: user info in --server or a
// kubeconfig's server is refused, naming where it came from, and the
// credential is printed nowhere (not in the error, nor in -v=6 request
// lines, which would come first).
func TestServerAddressWithCredentialsIsRefused(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kc, []byte("current-context: x\ncontexts: [{name: x, context: {cluster: x}}]\n"+
		"clusters: [{name: x, cluster: {server: \"http://admin:pw-URLSECRET@127.0.0.1:1\"}}]\n"), 0o600))
	tests := []struct {
		name  string
		args  []string
		where string
	}{
		{"--server", []string{"pods", "--watch=false", "-v=6", "-s", "http://tok-URLSECRET@127.0.0.1:1"}, "--server"},
		{"kubeconfig", []string{"pods", "--watch=false", "-v=6", "--kubeconfig", kc}, "clusters[].cluster.server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := kwatch(t, testEnv(t), tt.args...)
			requireOneLineError(t, r, tt.where, "<redacted>@127.0.0.1:1", "user info")
			require.NotContains(t, r.stderr, "URLSECRET")
		})
	}
}
