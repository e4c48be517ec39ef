package store

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// model is the obviously-correct reference: a plain map and a counter.
type model struct {
	objs map[string]obj
	rv   string
}

// chooser yields choices in [0, n); a seeded PRNG or fuzz bytes drive it.
type chooser func(n int) int

// randomObj picks from a small key space so updates and deletes hit.
func randomObj(pick chooser) obj {
	ns := []string{"", "a", "b", "c"}[pick(4)]
	name := fmt.Sprintf("o%d", pick(12))
	var labels []string
	if pick(4) > 0 {
		labels = append(labels, "app="+[]string{"web", "db", "api"}[pick(3)])
	}
	for range pick(3) {
		labels = append(labels, fmt.Sprintf("k%d=v%d", pick(3), pick(2)))
	}
	if pick(25) == 0 {
		labels = append(labels, "bad=true") // errIndex refuses it
	}
	return mk(ns, name, labels...)
}

func isBad(o obj) bool { return o.Labels["bad"] == "true" }

// runOps applies steps random operations to a store and the model, checking
// every return value and, after each step, the whole store and its indexes.
func runOps(t *testing.T, pick chooser, steps int) {
	s := newTestStore()
	m := &model{objs: map[string]obj{}}
	for step := range steps {
		rv := fmt.Sprint(step + 1)
		switch op := pick(10); {
		case op < 5:
			stepUpsert(t, s, m, randomObj(pick), rv)
		case op < 8:
			stepDelete(t, s, m, randomObj(pick), rv)
		case op < 9:
			stepReplace(t, s, m, pick, rv)
		default:
			s.SetResourceVersion(rv)
			m.rv = rv
		}
		// The cheap checks run after every step; comparing every index
		// value's readers with the model runs every few steps and at the end.
		checkObjects(t, s, m)
		if step%5 == 4 || step == steps-1 {
			checkIndexReaders(t, s, m)
		}
	}
}

func stepUpsert(t *testing.T, s *Store[obj], m *model, o obj, rv string) {
	key := mustKey(t, o)
	old, existed, err := s.Upsert(o, rv)
	if isBad(o) {
		require.Error(t, err, "Upsert of a bad object")
		return
	}
	require.NoError(t, err)
	wantOld, wantExisted := m.objs[key]
	require.Equal(t, wantExisted, existed, "Upsert(%s): existed", key)
	require.Same(t, wantOld, old, "Upsert(%s): old", key)
	m.objs[key], m.rv = o, rv
}

func stepDelete(t *testing.T, s *Store[obj], m *model, o obj, rv string) {
	key := mustKey(t, o)
	old, existed := s.Delete(key, rv)
	wantOld, wantExisted := m.objs[key]
	require.Equal(t, wantExisted, existed, "Delete(%s): existed", key)
	require.Same(t, wantOld, old, "Delete(%s): old", key)
	delete(m.objs, key)
	m.rv = rv
}

func stepReplace(t *testing.T, s *Store[obj], m *model, pick chooser, rv string) {
	r := s.NewReplacement()
	next := map[string]obj{}
	for range pick(30) {
		o := randomObj(pick)
		err := r.Add(o)
		if isBad(o) {
			require.Error(t, err, "Add of a bad object")
			continue
		}
		require.NoError(t, err)
		next[mustKey(t, o)] = o
	}
	require.Equal(t, len(next), r.Len(), "Replacement.Len")
	old := s.Commit(r, rv)
	requireSameObjects(t, m.objs, old, "Commit must return the previous contents")
	m.objs, m.rv = next, rv
}

// checkObjects compares the objects and rv with the model, and the indexes
// with ones rebuilt from the stored objects.
func checkObjects(t *testing.T, s *Store[obj], m *model) {
	t.Helper()
	requireSameObjects(t, m.objs, s.Snapshot(), "objects")
	require.Equal(t, len(m.objs), s.Len(), "Len")
	require.Equal(t, m.rv, s.ResourceVersion(), "rv")
	requireConsistent(t, s)
}

// checkIndexReaders checks that IndexValues and ByIndex answer as a scan
// of the model would.
func checkIndexReaders(t *testing.T, s *Store[obj], m *model) {
	t.Helper()
	for name, fn := range map[string]IndexFunc[obj]{
		"app": appIndex, "labels": labelIndex, NamespaceIndex: namespaceIndexFunc[obj],
	} {
		want := map[string][]string{}
		for k, o := range m.objs {
			vals, err := fn(o)
			if err != nil {
				require.NoError(t, err, "index %q on %q", name, k)
			}
			for _, v := range dedup(vals) {
				want[v] = append(want[v], k)
			}
		}
		vals, err := s.IndexValues(name)
		require.NoError(t, err)
		require.Equal(t, nilIfEmpty(sorted(slicesOf(maps.Keys(want)))), nilIfEmpty(sorted(vals)), "IndexValues(%q)", name)
		for v, keys := range want {
			objs, err := s.ByIndex(name, v)
			require.NoError(t, err)
			got := make([]string, len(objs))
			for i, o := range objs {
				got[i], err = MetaKey(o)
				if err != nil {
					require.NoError(t, err)
				}
			}
			require.Equal(t, sorted(keys), sorted(got), "ByIndex(%q, %q)", name, v)
		}
	}
}

// requireSameObjects compares by pointer: the store must hand back the very
// objects it was given (and a deep compare would dominate the run time).
func requireSameObjects(t *testing.T, want, got map[string]obj, what string) {
	t.Helper()
	// Plain comparisons in the loop: require's per-call bookkeeping would
	// dominate the run time; require reports only a found difference.
	require.Len(t, got, len(want), "%s: got keys %v", what, slicesOf(maps.Keys(got)))
	for k, w := range want {
		if got[k] != w {
			require.Same(t, w, got[k], "%s: key %q", what, k)
		}
	}
}

func slicesOf(seq func(func(string) bool)) []string {
	var out []string
	for v := range seq {
		out = append(out, v)
	}
	return out
}

// TestPropertyAgainstModel runs random operation sequences from many seeds.
func TestPropertyAgainstModel(t *testing.T) {
	seeds, steps := 100, 200
	if testing.Short() {
		seeds = 10
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			runOps(t, rng.IntN, steps)
		})
	}
}

// FuzzStoreOps lets the fuzzer choose the operations; the seed corpus runs
// as an ordinary test. Once the input runs out every choice is 0.
func FuzzStoreOps(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233})
	f.Add([]byte("upsert delete replace bookmark: a somewhat longer seed input"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pick := func(n int) int {
			if len(data) == 0 {
				return 0
			}
			b := int(data[0])
			data = data[1:]
			return b % n
		}
		runOps(t, pick, 1+len(data)/3)
	})
}
