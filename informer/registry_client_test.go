package informer

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/sim"
	"github.com/kwatch/kwatch/internal/sim/simtest"
)

func TestRegistryKeepsClientsApart(t *testing.T) {
	h := simtest.Start(t, sim.Options{})
	var reg Registry
	opts := simOptions(t, h.URL, ListPaged)
	a, releaseA, err := Shared(&reg, opts)
	require.NoError(t, err)
	defer releaseA()
	other := simOptions(t, h.URL, ListPaged) // a second client: another identity, maybe another cluster
	require.NotSame(t, opts.Client, other.Client)
	b, releaseB, err := Shared(&reg, other)
	require.NoError(t, err)
	defer releaseB()
	require.NotSame(t, a, b, "two clients never share a cache")
}
