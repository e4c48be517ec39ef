package informer

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// TestRepeatedListDecodesNothing counts decodes: in a default (compact)
// informer of more objects than DefaultDecodeCache, a second List,
// ByIndex or Snapshot of unchanged objects decodes none of them, and a
// List after one change decodes that one object.
func TestRepeatedListDecodesNothing(t *testing.T) {
	const n = 3 * DefaultDecodeCache
	h := simkit.Start(t, sim.Options{HistorySize: 1000})
	_, err := h.Server.LoadPods(n, 4, 1)
	require.NoError(t, err)
	inf, err := New(simOptions(t, h.URL, ListAuto))
	require.NoError(t, err)
	start(t, inf)
	require.True(t, inf.WaitForSync(ctxTimeout(t)))
	st := inf.Store()
	require.Equal(t, n, len(st.List()))
	require.EqualValues(t, n, inf.Stats().Decodes, "the first List decodes every object once")
	require.Equal(t, n, len(st.List()))
	require.Len(t, st.Snapshot(), n)
	ns := st.List()[0].Namespace
	inNs, err := st.ByIndex(store.NamespaceIndex, ns)
	require.NoError(t, err)
	require.NotEmpty(t, inNs)
	for _, k := range st.ListKeys()[:100] {
		_, ok := st.Get(k)
		require.True(t, ok)
	}
	require.EqualValues(t, n, inf.Stats().Decodes, "repeated reads of unchanged objects decode nothing")

	p := st.List()[7]
	_, err = h.Server.PutPod(sim.Pod{Namespace: p.Namespace, Name: p.Name, Restarts: 42})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		q, ok := st.Get(key(p))
		return ok && q.ResourceVersion != p.ResourceVersion
	}, waitLong, tick)
	require.Len(t, st.List(), n)
	require.EqualValues(t, n+1, inf.Stats().Decodes, "a List after one change decodes the changed object only")
	require.LessOrEqual(t, inf.compact.cache.len(), n, "the replaced version left the cache")
}

// TestDecodeCacheSizedByUse: a batch grows the cache to hold it; reads
// that no longer ask for batches shrink it back to its floor, in about as
// many reads as the batch held; a replaced version is dropped, and a
// relist's copy of an unchanged version keeps its decode.
func TestDecodeCacheSizedByUse(t *testing.T) {
	const n = 3 * DefaultDecodeCache
	c := newDecodeCache[*testPod](0)
	raws := make([]*watch.Raw, n)
	for i := range raws {
		raws[i] = new(watch.Raw)
		require.NoError(t, raws[i].UnmarshalJSON([]byte(podJSON(fmt.Sprint(i), "1"))))
	}
	c.batch(n)
	for _, r := range raws {
		if _, _, ok := c.get(r); !ok {
			c.put(r, &testPod{}, nil)
		}
	}
	require.Equal(t, n, c.len(), "the batch is kept whole")
	c.batch(n)
	for i, r := range raws {
		_, _, ok := c.get(r)
		require.True(t, ok, "the batch repeated hits (%d)", i)
	}
	for range 3 * n {
		c.get(raws[0])
	}
	require.LessOrEqual(t, c.len(), DefaultDecodeCache, "without batches it shrinks to its floor")
	c.put(raws[0], &testPod{}, nil)
	_, _, ok := c.get(raws[0])
	require.True(t, ok)

	c.drop(raws[0])
	_, _, ok = c.get(raws[0])
	require.False(t, ok, "a dropped version is gone")
	c.put(raws[1], &testPod{}, nil)
	copyOf := new(watch.Raw)
	require.NoError(t, copyOf.UnmarshalJSON([]byte(podJSON("1", "1"))))
	c.move(raws[1], copyOf)
	_, _, ok = c.get(copyOf)
	require.True(t, ok, "the relist's copy has the decode")
	_, _, ok = c.get(raws[1])
	require.False(t, ok)
}
