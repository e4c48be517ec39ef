package conformance_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/conformance/harness"
	"github.com/kwatch/kwatch/internal/conformance/suite"
)

// TestReal runs the suite against etcd and kube-apiserver built from source.
func TestReal(t *testing.T) {
	if !realEnabled() {
		t.Skip("KWATCH_CONFORMANCE_REAL=0: real server skipped")
	}
	t.Parallel()
	require.NoError(t, servers.err, "building the servers")
	cl, err := harness.StartCluster(t.Context(), harness.ClusterOptions{Binaries: servers.bin, Dir: t.TempDir()})
	require.NoError(t, err, "starting etcd and kube-apiserver")
	t.Cleanup(cl.Stop)

	r := suite.Run(t, newRealTarget(t, cl), suite.Cases(), suite.Options{})
	results.Add(r)
	require.NoError(t, cl.Check(), "a server died during the suite")
}
