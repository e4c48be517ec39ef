package informer

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// TestGetOwnedDecodesProtobufOnceForItsCaller counts decodes and copies in
// a compact informer of protobuf objects: GetOwned of an object no reader
// has read decodes it for the caller alone (one decode, no copy, nothing
// cached); once a shared read cached it, GetOwned copies the cached one.
// Either way the caller's changes reach no other reader.
func TestGetOwnedDecodesProtobufOnceForItsCaller(t *testing.T) {
	c, err := kube.NewClient(&kube.Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	inf, err := New(Options[*metav1.PartialObjectMetadata]{Client: c, Resource: kube.Pods, Logger: quietLogger()})
	require.NoError(t, err)
	pb, err := (&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", ResourceVersion: "5"}}).Marshal()
	require.NoError(t, err)
	raw := new(watch.Raw)
	require.NoError(t, raw.Unmarshal(pb))
	_, _, err = inf.compact.raw.store.Upsert(raw, "5")
	require.NoError(t, err)
	copies := 0
	copyMeta := func(m *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
		copies++
		return m.DeepCopy(), nil
	}

	own, ok, err := inf.GetOwned("ns/p", copyMeta)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 0, copies, "an uncached protobuf object is decoded for its caller, not copied")
	require.EqualValues(t, 1, inf.Stats().Decodes)
	require.Zero(t, inf.compact.cache.len(), "a decode of its own does not enter the cache")
	own.Name = "changed"

	shared, ok := inf.Store().Get("ns/p")
	require.True(t, ok)
	require.Equal(t, "p", shared.Name)
	require.EqualValues(t, 2, inf.Stats().Decodes)

	again, ok, err := inf.GetOwned("ns/p", copyMeta)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 1, copies, "a cached object is copied")
	require.EqualValues(t, 2, inf.Stats().Decodes, "and not decoded again")
	require.NotSame(t, shared, again)

	_, ok, err = inf.GetOwned("no/such", copyMeta)
	require.NoError(t, err)
	require.False(t, ok)
}

// TestGetOwnedCopiesJSON: a JSON object is always read shared and copied,
// since the JSON decoder interns bytes (managedFields) that an object its
// caller may change must not share.
func TestGetOwnedCopiesJSON(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	_, err := h.Server.LoadPods(3, 1, 1)
	require.NoError(t, err)
	inf, err := New(simOptions(t, h.URL, ListAuto))
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
