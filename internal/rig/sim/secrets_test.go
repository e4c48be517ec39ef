package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSecretStringDataIsMergedIntoData(t *testing.T) {
	m := map[string]any{"data": map[string]any{"a": "eA==", "b": "eQ=="}, "stringData": map[string]any{"b": "two", "c": "three"}}
	require.Nil(t, normalizeSecret(m))
	require.Equal(t, map[string]any{"data": map[string]any{"a": "eA==", "b": "dHdv", "c": "dGhyZWU="}, "type": "Opaque"}, m)

	m = map[string]any{"type": "kubernetes.io/tls"}
	require.Nil(t, normalizeSecret(m))
	require.Equal(t, map[string]any{"type": "kubernetes.io/tls"}, m, "a type given is kept, no data invented")

	for _, bad := range []map[string]any{{"stringData": "x"}, {"stringData": map[string]any{"a": 1}}, {"stringData": map[string]any{}, "data": 5}} {
		require.NotNil(t, normalizeSecret(bad), "%v", bad)
	}
}
