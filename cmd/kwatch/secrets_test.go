package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// TestTokensNeverPrinted runs kwatch with verbose logs and a known token,
// refused and then accepted, and searches everything it printed.
func TestTokensNeverPrinted(t *testing.T) {
	const secret = "kw-cli-secret-7d3a91"
	h := simkit.Start(t, sim.Options{BearerToken: secret})
	for _, token := range []string{secret + "-wrong", secret} {
		r := kwatch(t, testEnv(t), "pods", "-A", "-v=7", "-s", h.URL, "--token", token, "--watch=false")
		require.NotContains(t, r.stdout+r.stderr, "kw-cli-secret", "token %q leaked into the output", token)
		if token == secret {
			require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
		} else {
			require.NotEqual(t, 0, r.code)
		}
	}
}
