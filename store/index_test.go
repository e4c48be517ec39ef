package store

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBucket(t *testing.T) {
	var b bucket
	require.Zero(t, b.len())
	require.False(t, b.has("a"))

	b = b.with("a")
	require.Equal(t, bucket{one: "a"}, b, "one key: no map")
	b = b.with("a")
	require.Equal(t, bucket{one: "a"}, b, "adding the same key is a no-op")
	b = b.with("b")
	require.Equal(t, 2, b.len())
	require.Empty(t, b.one, "two keys: all in the map")
	require.ElementsMatch(t, []string{"a", "b"}, b.appendKeys(nil))

	b, found := b.without("zz")
	require.False(t, found)
	require.Equal(t, 2, b.len())
	b, found = b.without("a")
	require.True(t, found)
	require.Equal(t, bucket{one: "b"}, b, "back to one key: map dropped")
	b, found = b.without("a")
	require.False(t, found)
	b, found = b.without("b")
	require.True(t, found)
	require.Zero(t, b.len())
}

// TestIndexUpkeep walks an object through changes of its index values and
// checks each index after every step.
func TestIndexUpkeep(t *testing.T) {
	s := newTestStore()
	steps := []struct {
		name    string
		do      func() error
		app     map[string][]string // want: app value -> keys
		nsVals  []string
		lblVals []string
	}{
		{"add", func() error { return up(s, mk("ns", "a", "app=web", "x=1")) },
			map[string][]string{"web": {"ns/a"}}, []string{"ns"}, []string{"app=web", "x=1"}},
		{"second key shares value", func() error { return up(s, mk("ns", "b", "app=web")) },
			map[string][]string{"web": {"ns/a", "ns/b"}}, []string{"ns"}, []string{"app=web", "x=1"}},
		{"update changes value", func() error { return up(s, mk("ns", "a", "app=db", "y=2")) },
			map[string][]string{"web": {"ns/b"}, "db": {"ns/a"}}, []string{"ns"}, []string{"app=db", "app=web", "y=2"}},
		{"update drops value", func() error { return up(s, mk("ns", "a")) },
			map[string][]string{"web": {"ns/b"}}, []string{"ns"}, []string{"app=web"}},
		{"update keeps value", func() error { return up(s, mk("ns", "b", "app=web", "z=3")) },
			map[string][]string{"web": {"ns/b"}}, []string{"ns"}, []string{"app=web", "z=3"}},
		{"other namespace", func() error { return up(s, mk("other", "c", "app=web")) },
			map[string][]string{"web": {"ns/b", "other/c"}}, []string{"ns", "other"}, []string{"app=web", "z=3"}},
		{"delete removes", func() error { s.Delete("ns/b", ""); return nil },
			map[string][]string{"web": {"other/c"}}, []string{"ns", "other"}, []string{"app=web"}},
		{"delete drops empty sets", func() error { s.Delete("other/c", ""); return nil },
			map[string][]string{}, []string{"ns"}, nil},
		{"delete last", func() error { s.Delete("ns/a", ""); return nil },
			map[string][]string{}, nil, nil},
	}
	for _, st := range steps {
		require.NoError(t, st.do(), st.name)
		requireConsistent(t, s)
		gotApp := map[string][]string{}
		vals, err := s.IndexValues("app")
		require.NoError(t, err)
		for _, v := range vals {
			keys, err := s.IndexKeys("app", v)
			require.NoError(t, err)
			gotApp[v] = sorted(keys)
		}
		require.Equal(t, st.app, gotApp, "%s: app index", st.name)
		ns, _ := s.IndexValues(NamespaceIndex)
		require.Equal(t, st.nsVals, nilIfEmpty(sorted(ns)), "%s: namespace values", st.name)
		lbl, _ := s.IndexValues("labels")
		require.Equal(t, st.lblVals, nilIfEmpty(sorted(lbl)), "%s: label values", st.name)
	}
}

func up(s *Store[obj], o obj) error {
	_, _, err := s.Upsert(o, "")
	return err
}

// TestIndexErrorLeavesStoreUnchanged: a failing index function on add and
// on update applies nothing, not even to the indexes that ran before it.
func TestIndexErrorLeavesStoreUnchanged(t *testing.T) {
	s := seeded(t)
	before := s.Snapshot()
	beforeRV := s.ResourceVersion()
	beforeVals := allIndexValues(t, s)

	for _, o := range []obj{
		mk("ns9", "new", "app=x", "bad=true"),   // add
		mk("ns1", "a", "app=moved", "bad=true"), // update
	} {
		old, existed, err := s.Upsert(o, "100")
		var ie *IndexError
		require.ErrorAs(t, err, &ie, "Upsert(%s)", o.Name)
		require.False(t, existed, "no old object reported on error")
		require.Nil(t, old)
		require.Equal(t, before, s.Snapshot(), "objects changed by a failed Upsert")
		require.Equal(t, beforeRV, s.ResourceVersion(), "rv changed by a failed Upsert")
		require.Equal(t, beforeVals, allIndexValues(t, s), "indexes changed by a failed Upsert")
		requireConsistent(t, s)
	}
}

func allIndexValues(t *testing.T, s *Store[obj]) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, name := range s.IndexNames() {
		vals, err := s.IndexValues(name)
		require.NoError(t, err)
		for _, v := range vals {
			keys, err := s.IndexKeys(name, v)
			require.NoError(t, err)
			out[name+"\x00"+v] = sorted(keys)
		}
	}
	return out
}

// flaky is an index function whose answer the test changes behind the
// store's back: the store must detect the mismatch and scrub, not leak.
type flaky struct {
	vals []string
	err  error
}

func (f *flaky) fn(obj) ([]string, error) { return f.vals, f.err }

func TestNonDeterministicIndexIsScrubbed(t *testing.T) {
	tests := []struct {
		name     string
		before   []string // values when the object was added
		after    []string // values the function gives from then on
		afterErr error
		update   bool // Upsert again (else Delete)
	}{
		{"update: old value changed", []string{"a"}, []string{"b"}, nil, true},
		{"update: old value shared with new", []string{"a", "b"}, []string{"b", "c"}, nil, true},
		{"update: recompute fails", []string{"a"}, []string{"b"}, errors.New("flake"), true},
		{"delete: old value changed", []string{"a"}, []string{"b"}, nil, false},
		{"delete: recompute fails", []string{"a", "b"}, nil, errors.New("flake"), false},
		{"delete: duplicates", []string{"a", "a"}, []string{"a", "a"}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &flaky{vals: tt.before}
			s := New(Options[obj]{Indexers: map[string]IndexFunc[obj]{"f": f.fn}})
			require.NoError(t, up(s, mk("ns", "other")), "a neighbour sharing the values")
			require.NoError(t, up(s, mk("ns", "x")))
			f.vals, f.err = tt.after, tt.afterErr
			if tt.update {
				if tt.afterErr != nil {
					// The new object cannot be indexed either: rejected.
					require.Error(t, up(s, mk("ns", "x")))
					return
				}
				require.NoError(t, up(s, mk("ns", "x")))
			} else {
				s.Delete("ns/x", "")
			}
			want := map[string][]string{}
			for _, v := range dedup(tt.before) {
				want[v] = []string{"ns/other"}
			}
			if tt.update {
				for _, v := range dedup(tt.after) {
					want[v] = sorted(append(want[v], "ns/x"))
				}
			}
			got := map[string][]string{}
			vals, err := s.IndexValues("f")
			require.NoError(t, err)
			for _, v := range vals {
				keys, _ := s.IndexKeys("f", v)
				got[v] = sorted(keys)
			}
			require.Equal(t, want, got, "index after %s", tt.name)
		})
	}
}

func TestDuplicateIndexValues(t *testing.T) {
	dup := func(o obj) ([]string, error) { return []string{o.Labels["v"], o.Labels["v"]}, nil }
	s := New(Options[obj]{Indexers: map[string]IndexFunc[obj]{"dup": dup}})
	require.NoError(t, up(s, mk("ns", "a", "v=1")))
	require.NoError(t, up(s, mk("ns", "a", "v=2")))
	requireConsistent(t, s)
	keys, err := s.IndexKeys("dup", "2")
	require.NoError(t, err)
	require.Equal(t, []string{"ns/a"}, keys)
	s.Delete("ns/a", "")
	vals, _ := s.IndexValues("dup")
	require.Empty(t, vals, "got %v after delete", vals)
}

// The namespace index of a store keyed by MetaKey is kept by key: a
// stored object whose namespace was changed in place (which callers must
// not do) neither moves its key nor loses it on the next update. A store
// with a key function of its own recomputes the index on every update, so
// an object that moves namespace under the same key moves in it.
func TestNamespaceIndexOnUpdate(t *testing.T) {
	s := New(Options[obj]{})
	stored := mk("ns", "a")
	require.NoError(t, up(s, stored))
	stored.Namespace = "elsewhere" // the caller's bug
	require.NoError(t, up(s, mk("ns", "a", "x=1")))
	keys, err := s.IndexKeys(NamespaceIndex, "ns")
	require.NoError(t, err)
	require.Equal(t, []string{"ns/a"}, keys)
	requireConsistent(t, s)

	byName := New(Options[obj]{Key: func(o obj) (string, error) { return o.Name, nil }})
	require.NoError(t, up(byName, mk("one", "a")))
	require.NoError(t, up(byName, mk("two", "a")))
	keys, _ = byName.IndexKeys(NamespaceIndex, "one")
	require.Empty(t, keys)
	keys, _ = byName.IndexKeys(NamespaceIndex, "two")
	require.Equal(t, []string{"a"}, keys)
	requireConsistent(t, byName)
}
