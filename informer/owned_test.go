package informer

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// TestGetOwnedDecodesOnceForItsCaller counts decodes and copies in a
// default (compact) informer: GetOwned of an object no reader has read
// decodes it for the caller alone (one decode, no copy, nothing cached);
// once a shared read cached it, GetOwned copies the cached one. Either way
// the caller's changes reach no other reader.
func TestGetOwnedDecodesOnceForItsCaller(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	_, err := h.Server.LoadPods(10, 2, 1)
	require.NoError(t, err)
	inf, err := New(simOptions(t, h.URL, ListAuto))
	require.NoError(t, err)
	start(t, inf)
	require.True(t, inf.WaitForSync(ctxTimeout(t)))
	k := inf.Store().ListKeys()[0]
	copies := 0
	copyPod := func(p *testPod) (*testPod, error) { copies++; c := *p; return &c, nil }

	own, ok, err := inf.GetOwned(k, copyPod)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 0, copies, "an uncached object is decoded for its caller, not copied")
	require.EqualValues(t, 1, inf.Stats().Decodes)
	require.Zero(t, inf.compact.cache.len(), "a decode of its own does not enter the cache")
	own.Name = "changed"

	shared, ok := inf.Store().Get(k)
	require.True(t, ok)
	require.NotEqual(t, "changed", shared.Name)
	require.EqualValues(t, 2, inf.Stats().Decodes)

	again, ok, err := inf.GetOwned(k, copyPod)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 1, copies, "a cached object is copied")
	require.EqualValues(t, 2, inf.Stats().Decodes, "and not decoded again")
	require.NotSame(t, shared, again)

	_, ok, err = inf.GetOwned("no/such", copyPod)
	require.NoError(t, err)
	require.False(t, ok)
}

// TestGetOwnedCopiesInTheTypedStore: in StoreTyped every GetOwned is a copy
// of the stored object.
func TestGetOwnedCopiesInTheTypedStore(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	_, err := h.Server.LoadPods(3, 1, 1)
	require.NoError(t, err)
	opts := simOptions(t, h.URL, ListAuto)
	opts.Store = StoreTyped
	inf, err := New(opts)
	require.NoError(t, err)
	start(t, inf)
	require.True(t, inf.WaitForSync(ctxTimeout(t)))
	k := inf.Store().ListKeys()[0]
	copies := 0
	own, ok, err := inf.GetOwned(k, func(p *testPod) (*testPod, error) { copies++; c := *p; return &c, nil })
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 1, copies)
	shared, _ := inf.Store().Get(k)
	require.NotSame(t, shared, own)
}
