package kube

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLoadingLeavesKubeconfigUntouched: reading a kubeconfig never writes
// it, so its permissions are never loosened and its content never changes.
func TestLoadingLeavesKubeconfigUntouched(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config")
	body := []byte(`apiVersion: v1
kind: Config
current-context: c
contexts: [{name: c, context: {cluster: k, user: u, namespace: demo}}]
clusters: [{name: k, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: very-secret}}]
`)
	require.NoError(t, os.WriteFile(path, body, 0o600))
	before, err := os.Stat(path)
	require.NoError(t, err)
	cfg, err := LoadKubeconfig(KubeconfigOptions{Path: path})
	require.NoError(t, err)
	require.Equal(t, "demo", cfg.Namespace)
	after, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), after.Mode().Perm(), "permissions unchanged")
	require.Equal(t, before.ModTime(), after.ModTime(), "file not rewritten")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, body, got)
}
