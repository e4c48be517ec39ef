package simkit_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

func TestStartTLSWithToken(t *testing.T) {
	h := simkit.Start(t, sim.Options{TLS: true, BearerToken: "t0k"})
	require.True(t, strings.HasPrefix(h.URL, "https://127.0.0.1:"))
	require.Equal(t, h.URL, h.Kit.URL(), "the harness serves the kit's server")
	resp, err := h.Client.Do(h.NewRequest(t, "GET", "/api/v1/namespaces", nil))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, 2, resp.ProtoMajor)

	kc, err := os.ReadFile(h.Kubeconfig(t))
	require.NoError(t, err)
	for _, want := range []string{"server: " + h.URL, "token: t0k", "certificate-authority-data: ", "current-context: sim"} {
		require.Contains(t, string(kc), want)
	}
}

func TestStartPlain(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	require.True(t, strings.HasPrefix(h.URL, "http://127.0.0.1:"))
	require.Nil(t, h.CACertPEM)
	resp, err := h.Client.Get(h.URL + "/version")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
}

// TestServerIsTheKits: what the test writes through the simulator, the
// kit reads back, and the other way round.
func TestServerIsTheKits(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	_, err := h.Server.PutPod(sim.Pod{Namespace: "demo", Name: "web-1"})
	require.NoError(t, err)
	got, err := h.Kit.Get("pods", "demo", "web-1")
	require.NoError(t, err)
	require.Equal(t, "web-1", got.Name)
}
