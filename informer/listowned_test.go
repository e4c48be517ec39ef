package informer

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// TestListOwnedDecodesOnlyWhatItReturns: a compact store's ListOwned by
// label selector reads labels from the stored metadata, so it decodes the
// objects it returns and no other, and fills no decode cache; each object
// returned is the caller's own.
func TestListOwnedDecodesOnlyWhatItReturns(t *testing.T) {
	c, err := kube.NewClient(&kube.Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	inf, err := New(Options[*metav1.PartialObjectMetadata]{Client: c, Resource: kube.Pods, Logger: quietLogger()})
	require.NoError(t, err)
	for i := range 100 {
		m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%d", i%2),
			Name: fmt.Sprintf("p-%d", i), ResourceVersion: fmt.Sprint(i + 1),
			Labels: map[string]string{"app": fmt.Sprintf("a%d", i%5)}}}
		pb, err := m.Marshal()
		require.NoError(t, err)
		raw := new(watch.Raw)
		require.NoError(t, raw.Unmarshal(pb))
		_, _, err = inf.compact.raw.store.Upsert(raw, fmt.Sprint(i+1))
		require.NoError(t, err)
	}
	copies := 0
	copyMeta := func(m *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) {
		copies++
		return m.DeepCopy(), nil
	}
	sel, err := labels.Parse("app=a3")
	require.NoError(t, err)

	got, err := inf.ListOwned(store.NamespaceIndex, "ns-1", sel, copyMeta)
	require.NoError(t, err)
	require.Len(t, got, 10, "ns-1 holds the odd pods; app=a3 is every fifth")
	for _, m := range got {
		require.Equal(t, "ns-1", m.Namespace)
		require.Equal(t, "a3", m.Labels["app"])
	}
	require.EqualValues(t, 10, inf.Stats().Decodes, "only the matching objects are decoded")
	require.Zero(t, copies, "decoded for the caller, not copied")
	require.Zero(t, inf.compact.cache.len(), "nothing enters the decode cache")

	all, err := inf.ListOwned("", "", nil, copyMeta)
	require.NoError(t, err)
	require.Len(t, all, 100)
	all[0].Labels["app"] = "changed" // the caller's own
	again, err := inf.ListOwned("", "", labels.SelectorFromSet(labels.Set{"app": "changed"}), copyMeta)
	require.NoError(t, err)
	require.Empty(t, again)

	_, err = inf.ListOwned("no-such-index", "x", nil, copyMeta)
	require.ErrorIs(t, err, store.ErrUnknownIndex)
}

// BenchmarkListBySelector lists the 1% of 10,000 compact-stored objects a
// label selector matches, through ListOwned, and as a reader did before it
// (Store().List, then the labels of each decoded object, then a copy).
func BenchmarkListBySelector(b *testing.B) {
	c, err := kube.NewClient(&kube.Config{Host: "http://127.0.0.1:1"})
	require.NoError(b, err)
	inf, err := New(Options[*metav1.PartialObjectMetadata]{Client: c, Resource: kube.Pods, Logger: quietLogger(),
		Tuning: Tuning{DecodeCache: -1}})
	require.NoError(b, err)
	for i := range 10000 {
		m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("p-%d", i),
			ResourceVersion: fmt.Sprint(i + 1), Labels: map[string]string{"app": fmt.Sprintf("a%d", i%100), "tier": "web"},
			Annotations: map[string]string{"note": string(make([]byte, 1500))}}}
		pb, err := m.Marshal()
		require.NoError(b, err)
		raw := new(watch.Raw)
		require.NoError(b, raw.Unmarshal(pb))
		_, _, err = inf.compact.raw.store.Upsert(raw, fmt.Sprint(i+1))
		require.NoError(b, err)
	}
	sel := labels.SelectorFromSet(labels.Set{"app": "a7"})
	copyMeta := func(m *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) { return m.DeepCopy(), nil }
	b.Run("ListOwned", func(b *testing.B) {
		for b.Loop() {
			got, _ := inf.ListOwned("", "", sel, copyMeta)
			if len(got) != 100 {
				b.Fatalf("%d objects", len(got))
			}
		}
	})
	b.Run("decode-all-then-filter", func(b *testing.B) {
		for b.Loop() {
			var got []*metav1.PartialObjectMetadata
			for _, m := range inf.Store().List() {
				if sel.Matches(labels.Set(m.Labels)) {
					got = append(got, m.DeepCopy())
				}
			}
			if len(got) != 100 {
				b.Fatalf("%d objects", len(got))
			}
		}
	})
}
