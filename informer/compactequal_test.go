package informer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// call is one handler call, with the objects it was given.
type call struct {
	kind          string // add, update, relist-update, delete
	old, cur      *testPod
	initial, gone bool // inInitialList; finalStateUnknown
}

// callLog records an Ordered handler's calls per key: the order of one
// key's calls is the order of its changes, the same in both stores; the
// order across keys after a relist is the store's map order.
type callLog struct {
	mu    sync.Mutex
	byKey map[string][]call
	n     int
}

func (l *callLog) rec(k string, c call) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byKey[k] = append(l.byKey[k], c)
	l.n++
}

func (l *callLog) OnAdd(p *testPod, initial bool) {
	l.rec(key(p), call{kind: "add", cur: p, initial: initial})
}
func (l *callLog) OnUpdate(old, p *testPod) { l.rec(key(p), call{kind: "update", old: old, cur: p}) }
func (l *callLog) OnRelistUpdate(old, p *testPod) {
	l.rec(key(p), call{kind: "relist-update", old: old, cur: p})
}
func (l *callLog) OnDelete(p *testPod, gone bool) {
	l.rec(key(p), call{kind: "delete", cur: p, gone: gone})
}

func (l *callLog) count() int { l.mu.Lock(); defer l.mu.Unlock(); return l.n }

// TestCompactReadsEqualTypedUnderChurn runs a typed and a compact informer
// side by side on one server under random churn, then through a relist
// that finds deletes, updates and adds it did not watch (tombstones). At
// every quiet point each read path of the compact store (Get, List,
// ByIndex, Snapshot, IndexKeys, ListOwned) returns what the typed store returns,
// object for object, and every handler call (adds, updates, relist
// updates, deletes with finalStateUnknown) is the same, key by key.
func TestCompactReadsEqualTypedUnderChurn(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { runCompactEqual(t, seed) })
	}
}

func runCompactEqual(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 25))
	h := simkit.Start(t, sim.Options{HistorySize: 100000, Seed: seed})
	for i := range 30 {
		_, err := h.Server.PutPod(sim.Pod{Namespace: fmt.Sprintf("ns-%d", i%3), Name: fmt.Sprintf("p-%d", i)})
		require.NoError(t, err)
	}
	byNode := map[string]store.IndexFunc[*testPod]{"node": func(p *testPod) ([]string, error) {
		return []string{p.Spec.NodeName}, nil
	}}
	var infs [2]*Informer[*testPod]
	var logs [2]*callLog
	for i, sm := range []StoreMode{StoreTyped, StoreDefault} {
		opts := simOptions(t, h.URL, []ListMode{ListAuto, ListPaged}[seed%2])
		opts.Store, opts.Indexers = sm, byNode
		// Small for a cache sized by use, so that its growth and decay run.
		opts.DecodeCache = []int{0, 0, 16}[seed%3]
		inf, err := New(opts)
		require.NoError(t, err)
		logs[i] = &callLog{byKey: map[string][]call{}}
		_, err = inf.AddHandler(logs[i], HandlerOptions{Delivery: Ordered, Buffer: 100000})
		require.NoError(t, err)
		infs[i] = inf
		start(t, inf)
	}
	typed, compact := infs[0], infs[1]
	require.Equal(t, StoreCompact, compact.StoreMode())
	quiet := func(what string) {
		want := serverState(t, h.Server)
		require.Eventually(t, func() bool {
			return mapsEqual(storeRVs(typed), want) && mapsEqual(storeRVs(compact), want) &&
				logs[0].count() == logs[1].count()
		}, waitLong, tick, what)
		requireSameReads(t, typed, compact, what)
	}
	churn := func(n int) {
		for range n {
			ns, name := fmt.Sprintf("ns-%d", rng.IntN(3)), fmt.Sprintf("p-%d", rng.IntN(50))
			if rng.IntN(100) < 25 {
				_, _ = h.Server.Delete("pods", ns, name) // may not exist
				continue
			}
			_, err := h.Server.PutPod(sim.Pod{Namespace: ns, Name: name, NodeName: fmt.Sprintf("n%d", rng.IntN(4)),
				Restarts: int32(rng.IntN(100)), App: fmt.Sprintf("app-%d", rng.IntN(3))})
			require.NoError(t, err)
		}
	}
	quiet("initial list")
	for round := range 3 {
		churn(80)
		quiet(fmt.Sprintf("churn round %d", round))
	}
	// Both lose their watches and the history, and cannot reconnect while
	// the server changes: the relist that follows infers the deletes.
	require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultError, Count: -1}))
	h.Server.DropWatches(false)
	churn(60)
	h.Server.Compact() // their RV is now too old: 410, relist
	h.Server.ClearFaults()
	quiet("relist after lost history")
	logs[0].mu.Lock()
	defer logs[0].mu.Unlock()
	logs[1].mu.Lock()
	defer logs[1].mu.Unlock()
	kinds := map[string]int{}
	for k, calls := range logs[0].byKey {
		require.Equal(t, calls, logs[1].byKey[k], "handler calls of %s", k)
		for _, c := range calls {
			kinds[fmt.Sprintf("%s/unknown=%v", c.kind, c.gone)]++
		}
	}
	require.Len(t, logs[1].byKey, len(logs[0].byKey))
	require.Positive(t, kinds["delete/unknown=true"], "the relist found deletes: %v", kinds)
	require.Positive(t, kinds["delete/unknown=false"], "%v", kinds)
	require.Positive(t, kinds["relist-update/unknown=false"], "%v", kinds)
}

// requireSameReads compares every read path of the two informers' stores.
func requireSameReads(t *testing.T, typed, compact *Informer[*testPod], what string) {
	a, b := typed.Store(), compact.Store()
	require.Equal(t, a.Snapshot(), b.Snapshot(), "Snapshot, %s", what)
	byKey := func(ps []*testPod) []*testPod {
		slices.SortFunc(ps, func(x, y *testPod) int { return compareStrings(key(x), key(y)) })
		return ps
	}
	require.Equal(t, byKey(a.List()), byKey(b.List()), "List, %s", what)
	keys := b.ListKeys()
	require.ElementsMatch(t, a.ListKeys(), keys, "ListKeys, %s", what)
	for _, k := range keys {
		x, okA := a.Get(k)
		y, okB := b.Get(k)
		require.Equal(t, okA, okB, "Get(%s), %s", k, what)
		require.Equal(t, x, y, "Get(%s), %s", k, what)
	}
	for _, ix := range []struct{ name, value string }{
		{store.NamespaceIndex, "ns-1"}, {"node", "n2"}, {"node", "n1"},
	} {
		x, err := a.ByIndex(ix.name, ix.value)
		require.NoError(t, err)
		y, err := b.ByIndex(ix.name, ix.value)
		require.NoError(t, err)
		require.Equal(t, byKey(x), byKey(y), "ByIndex(%s=%s), %s", ix.name, ix.value, what)
		xk, _ := a.IndexKeys(ix.name, ix.value)
		yk, _ := b.IndexKeys(ix.name, ix.value)
		require.ElementsMatch(t, xk, yk, "IndexKeys(%s=%s), %s", ix.name, ix.value, what)
	}
	// ListOwned: owned copies, filtered by labels (read from the compact
	// store's metadata, undecoded) and by index.
	copyPod := func(p *testPod) (*testPod, error) { c := *p; return &c, nil }
	for _, sel := range []string{"", "app=app-1", "app!=app-2", "app in (app-0,app-2),pod-template-hash"} {
		parsed, err := labels.Parse(sel)
		require.NoError(t, err)
		for _, ix := range []struct{ name, value string }{{"", ""}, {store.NamespaceIndex, "ns-2"}, {"node", "n3"}} {
			x, err := typed.ListOwned(ix.name, ix.value, parsed, copyPod)
			require.NoError(t, err)
			y, err := compact.ListOwned(ix.name, ix.value, parsed, copyPod)
			require.NoError(t, err)
			require.Equal(t, byKey(x), byKey(y), "ListOwned(%s=%s, %q), %s", ix.name, ix.value, sel, what)
		}
	}
	require.Equal(t, a.ResourceVersion(), b.ResourceVersion(), "ResourceVersion, %s", what)
	require.Zero(t, compact.Stats().DecodeErrors)
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestDefaultsAreCompact: an informer with no store option keeps a compact
// store; a Transform or a Table, which work on decoded objects, make the
// default typed; an explicit choice is kept.
func TestDefaultsAreCompact(t *testing.T) {
	c := newClient(t, "http://127.0.0.1:1")
	inf, err := New(Options[*testPod]{Client: c, Resource: kube.Pods})
	require.NoError(t, err)
	require.Equal(t, StoreCompact, inf.StoreMode(), "no options")
	require.NotNil(t, inf.compact)
	_, err = inf.AddRawHandler(HandlerFuncs[*watch.Raw]{}, HandlerOptions{})
	require.NoError(t, err, "a raw handler is available by default")

	for name, tc := range map[string]struct {
		opts Options[*testPod]
		want StoreMode
	}{
		"transform": {Options[*testPod]{Transform: func(p *testPod) (*testPod, error) { return p, nil }}, StoreTyped},
		"table":     {Options[*testPod]{Form: watch.FormTable}, StoreTyped},
		"typed":     {Options[*testPod]{Tuning: Tuning{Store: StoreTyped}}, StoreTyped},
		"compact":   {Options[*testPod]{Tuning: Tuning{Store: StoreCompact}}, StoreCompact},
		"metadata":  {Options[*testPod]{Form: watch.FormMetadata}, StoreCompact},
		"drop-mf":   {Options[*testPod]{DropManagedFields: true}, StoreCompact},
	} {
		tc.opts.Client, tc.opts.Resource = c, kube.Pods
		require.Equal(t, tc.want, tc.opts.EffectiveStore(), name)
		inf, err := New(tc.opts)
		require.NoError(t, err, name)
		require.Equal(t, tc.want, inf.StoreMode(), name)
	}
	raw, err := New(Options[*watch.Raw]{Client: c, Resource: kube.Pods})
	require.NoError(t, err)
	require.Equal(t, StoreTyped, raw.StoreMode(), "a Raw is already the compact form")
}
