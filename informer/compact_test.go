package informer

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// compactOptions are fastOptions in StoreCompact.
func compactOptions(t *testing.T, host string, mode ListMode) Options[*testPod] {
	opts := fastOptions(host, t, mode)
	opts.Store = StoreCompact
	return opts
}

// TestCompactStoreEqualsTyped runs a typed and a compact informer against
// one server under churn: both stores must end equal, object for object.
func TestCompactStoreEqualsTyped(t *testing.T) {
	h := simkit.Start(t, sim.Options{HistorySize: 1000})
	for i := range 30 {
		_, err := h.Server.PutPod(sim.Pod{Namespace: fmt.Sprintf("ns-%d", i%3), Name: fmt.Sprintf("p-%d", i)})
		require.NoError(t, err)
	}
	typedOpts := simOptions(t, h.URL, ListAuto)
	typedOpts.Store = StoreTyped
	typed, err := New(typedOpts)
	require.NoError(t, err)
	opts := simOptions(t, h.URL, ListAuto)
	opts.Store = StoreCompact
	compact, err := New(opts)
	require.NoError(t, err)
	start(t, typed)
	start(t, compact)
	require.True(t, compact.WaitForSync(ctxTimeout(t)))
	for i := range 60 {
		name := fmt.Sprintf("p-%d", i%40)
		if i%5 == 4 {
			_, _ = h.Server.Delete("pods", fmt.Sprintf("ns-%d", i%3), name)
			continue
		}
		_, err := h.Server.PutPod(sim.Pod{Namespace: fmt.Sprintf("ns-%d", i%3), Name: name, Restarts: int32(i)})
		require.NoError(t, err)
	}
	want := serverState(t, h.Server)
	require.Eventually(t, func() bool {
		return mapsEqual(storeRVs(typed), want) && mapsEqual(storeRVs(compact), want)
	}, waitLong, tick)
	require.Equal(t, typed.Store().Snapshot(), compact.Store().Snapshot(), "the compact store decodes to the typed store's objects")
	for _, k := range compact.Store().ListKeys() {
		a, _ := typed.Store().Get(k)
		b, ok := compact.Store().Get(k)
		require.True(t, ok)
		require.Equal(t, a, b)
	}
	nsKeys, err := compact.Store().IndexKeys(store.NamespaceIndex, "ns-1")
	require.NoError(t, err)
	wantKeys, err := typed.Store().IndexKeys(store.NamespaceIndex, "ns-1")
	require.NoError(t, err)
	require.ElementsMatch(t, wantKeys, nsKeys)
	require.Zero(t, compact.Stats().DecodeErrors)
}

// TestCompactKeyHandlerNeverDecodes: a KeyHandler feeding a queue costs
// no decode, whatever the churn.
func TestCompactKeyHandlerNeverDecodes(t *testing.T) {
	s := newScripted(t,
		answer(200, listJSON("10", "", podJSON("a", "5"), podJSON("b", "6"))),
		stream(false, eventJSON("MODIFIED", podJSON("a", "11")), eventJSON("DELETED", podJSON("b", "12")),
			eventJSON("ADDED", podJSON("c", "13"))),
	)
	inf, err := New(compactOptions(t, s.srv.URL, ListPaged))
	require.NoError(t, err)
	var mu sync.Mutex
	var keys []string
	_, err = inf.AddHandler(KeyHandler[*testPod](func(k string) { mu.Lock(); keys = append(keys, k); mu.Unlock() }),
		HandlerOptions{Delivery: Ordered})
	require.NoError(t, err)
	start(t, inf)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(keys) == 5 }, waitLong, tick)
	require.ElementsMatch(t, []string{"ns/a", "ns/b"}, keys[:2], "the list, in the store's order")
	require.Equal(t, []string{"ns/a", "ns/b", "ns/c"}, keys[2:], "the watch, in order")
	require.Zero(t, inf.Stats().Decodes, "a KeyHandler never decodes")
	raw, ok := inf.RawStore().Get("ns/c")
	require.True(t, ok)
	require.Equal(t, "13", raw.GetResourceVersion(), "metadata is read without a decode")
	require.Zero(t, inf.Stats().Decodes)
}

// TestCompactHandlerAndReaderShareOneDecode: a typed handler and a
// reconcile reading the same version pay one decode between them.
func TestCompactHandlerAndReaderShareOneDecode(t *testing.T) {
	s := newScripted(t,
		answer(200, listJSON("10", "", podJSON("a", "5"))),
		stream(false, eventJSON("MODIFIED", podJSON("a", "11"))),
	)
	inf, err := New(compactOptions(t, s.srv.URL, ListPaged))
	require.NoError(t, err)
	rec := &recorderT{}
	_, err = inf.AddHandler(rec, HandlerOptions{})
	require.NoError(t, err)
	start(t, inf)
	require.Eventually(t, func() bool { return len(rec.get()) == 2 }, waitLong, tick)
	require.Equal(t, []string{"add ns/a@5 initial", "update ns/a@5->11"}, rec.get())
	require.EqualValues(t, 2, inf.Stats().Decodes, "one decode per version")
	for range 3 {
		p, ok := inf.Store().Get("ns/a")
		require.True(t, ok)
		require.Equal(t, "n1", p.Spec.NodeName)
	}
	require.EqualValues(t, 2, inf.Stats().Decodes, "the reads hit the cache the handler filled")
}

// TestCompactUndecodableObjectIsAbsentAndCounted: an object the metadata
// scan accepts but T cannot decode is absent to readers and handlers, and
// Stats and Health say why; the next good version is served.
func TestCompactUndecodableObjectIsAbsentAndCounted(t *testing.T) {
	bad := `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"11"},"spec":{"nodeName":5}}`
	rec := &recorderT{}
	s := newScripted(t,
		answer(200, listJSON("10", "", podJSON("a", "5"))),
		when(rec.count(1), stream(false, eventJSON("MODIFIED", bad))),
	)
	inf, err := New(compactOptions(t, s.srv.URL, ListPaged))
	require.NoError(t, err)
	_, err = inf.AddHandler(rec, HandlerOptions{})
	require.NoError(t, err)
	start(t, inf)
	require.Eventually(t, func() bool { return inf.Store().ResourceVersion() == "11" }, waitLong, tick)
	_, ok := inf.Store().Get("ns/a")
	require.False(t, ok, "a version that does not decode is not served")
	require.EqualValues(t, 1, inf.Stats().DecodeErrors)
	require.ErrorContains(t, inf.Health().LastRefusal, "ns/a at resourceVersion 11 does not decode")
	_, ok = inf.RawStore().Get("ns/a")
	require.True(t, ok, "the raw record is kept: its metadata is the server's")
}

func TestCompactIndexes(t *testing.T) {
	s := newScripted(t, answer(200, listJSON("10", "", podJSON("a", "5"), podJSON("b", "6"))), stream(false))
	opts := compactOptions(t, s.srv.URL, ListPaged)
	opts.Indexers = map[string]store.IndexFunc[*testPod]{
		"node": func(p *testPod) ([]string, error) { return []string{p.Spec.NodeName}, nil },
	}
	opts.RawIndexers = map[string]store.IndexFunc[*watch.Raw]{
		"uid": func(r *watch.Raw) ([]string, error) { return []string{string(r.GetUID())}, nil },
	}
	inf, err := New(opts)
	require.NoError(t, err)
	start(t, inf)
	require.True(t, inf.WaitForSync(ctxTimeout(t)))
	decodes := inf.Stats().Decodes
	keys, err := inf.Store().IndexKeys("uid", "u-b")
	require.NoError(t, err)
	require.Equal(t, []string{"ns/b"}, keys)
	require.Equal(t, decodes, inf.Stats().Decodes, "a raw index costs no decode")
	pods, err := inf.Store().ByIndex("node", "n1")
	require.NoError(t, err)
	require.Len(t, pods, 2)

	opts.RawIndexers["node"] = opts.RawIndexers["uid"]
	_, err = New(opts)
	require.ErrorContains(t, err, `index "node" is both in Indexers and RawIndexers`)
}

func TestCompactRefusesWhatNeedsDecodedObjects(t *testing.T) {
	opts := compactOptions(t, "http://127.0.0.1:1", ListPaged)
	opts.Transform = func(p *testPod) (*testPod, error) { return p, nil }
	_, err := New(opts)
	require.ErrorContains(t, err, "Transform needs Store: StoreTyped")
	opts = compactOptions(t, "http://127.0.0.1:1", ListPaged)
	opts.Form = watch.FormTable
	_, err = New(opts)
	require.ErrorContains(t, err, "Table needs Store: StoreTyped")
	opts = fastOptions("http://127.0.0.1:1", t, ListPaged)
	opts.Store = StoreTyped
	opts.RawIndexers = map[string]store.IndexFunc[*watch.Raw]{"x": nil}
	_, err = New(opts)
	require.ErrorContains(t, err, "RawIndexers need the compact store")
	opts.Store = StoreDefault
	opts.Transform = func(p *testPod) (*testPod, error) { return p, nil }
	_, err = New(opts)
	require.ErrorContains(t, err, "RawIndexers need the compact store", "a Transform makes the default typed")
}

func TestDecodeCacheIsBounded(t *testing.T) {
	c := newDecodeCache[*testPod](3)
	raws := make([]*watch.Raw, 5)
	for i := range raws {
		raws[i] = new(watch.Raw)
		require.NoError(t, raws[i].UnmarshalJSON([]byte(podJSON(fmt.Sprint(i), "1"))))
		c.put(raws[i], &testPod{}, nil)
		c.put(raws[i], &testPod{}, nil) // a second put of one Raw is one entry
	}
	require.Equal(t, 3, c.len())
	for i, r := range raws {
		_, _, ok := c.get(r)
		require.Equal(t, i >= 2, ok, "the oldest are evicted first (%d)", i)
	}
	var none *decodeCache[*testPod] = newDecodeCache[*testPod](-1)
	none.put(raws[0], &testPod{}, nil)
	_, _, ok := none.get(raws[0])
	require.False(t, ok)
}

// TestCompactRawHandlerDecodesOnlyWhenAsked: a raw handler sees old and
// new metadata at once and pays a decode only for the object it asks for.
func TestCompactRawHandlerDecodesOnlyWhenAsked(t *testing.T) {
	s := newScripted(t,
		answer(200, listJSON("10", "", podJSON("a", "5"), podJSON("b", "6"))),
		stream(false, eventJSON("MODIFIED", podJSON("a", "11")), eventJSON("MODIFIED", podJSON("b", "12"))),
	)
	inf, err := New(compactOptions(t, s.srv.URL, ListPaged))
	require.NoError(t, err)
	var mu sync.Mutex
	var calls []string
	_, err = inf.AddRawHandler(HandlerFuncs[*watch.Raw]{
		UpdateFunc: func(old, cur *watch.Raw) {
			line := old.GetResourceVersion() + "->" + cur.GetResourceVersion()
			if cur.GetName() == "b" { // only b's object is needed
				p, err := inf.Decode(cur)
				require.NoError(t, err)
				line += " node " + p.Spec.NodeName
			}
			mu.Lock()
			calls = append(calls, line)
			mu.Unlock()
		}}, HandlerOptions{Delivery: Ordered})
	require.NoError(t, err)
	start(t, inf)
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(calls) == 2 }, waitLong, tick)
	require.Equal(t, []string{"5->11", "6->12 node n1"}, calls)
	require.EqualValues(t, 1, inf.Stats().Decodes)

	typedOpts := fastOptions(s.srv.URL, t, ListPaged)
	typedOpts.Store = StoreTyped
	typed, err := New(typedOpts)
	require.NoError(t, err)
	_, err = typed.AddRawHandler(HandlerFuncs[*watch.Raw]{}, HandlerOptions{})
	require.ErrorContains(t, err, "needs Store: StoreCompact")
}

// TestDropManagedFieldsInBothModes: both store modes drop managedFields,
// and end with the same objects.
func TestDropManagedFieldsInBothModes(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	for i := range 10 {
		_, err := h.Server.PutPod(sim.Pod{Namespace: "ns", Name: fmt.Sprintf("p-%d", i)})
		require.NoError(t, err)
	}
	var infs []*Informer[*testPod]
	for _, sm := range []StoreMode{StoreTyped, StoreCompact} {
		opts := simOptions(t, h.URL, ListAuto)
		opts.Store, opts.DropManagedFields = sm, true
		inf, err := New(opts)
		require.NoError(t, err)
		start(t, inf)
		require.True(t, inf.WaitForSync(ctxTimeout(t)))
		infs = append(infs, inf)
	}
	typed, compact := infs[0].Store().Snapshot(), infs[1].Store().Snapshot()
	require.Len(t, typed, 10)
	require.Equal(t, typed, compact)
	for _, p := range compact {
		require.Nil(t, p.ManagedFields)
	}
	kept, err := New(simOptions(t, h.URL, ListAuto))
	require.NoError(t, err)
	start(t, kept)
	require.True(t, kept.WaitForSync(ctxTimeout(t)))
	p, _ := kept.Store().Get("ns/p-1")
	require.NotEmpty(t, p.ManagedFields, "the simulator's pods have managedFields to drop")
	raw, _ := infs[1].RawStore().Get("ns/p-1")
	require.NotContains(t, string(raw.Body()), "managedFields")
}
