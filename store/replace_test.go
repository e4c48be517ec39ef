package store

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReplacement(t *testing.T) {
	s := seeded(t)
	before := s.Snapshot()
	r := s.NewReplacement()
	require.Zero(t, r.Len())

	adds := []obj{
		mk("ns1", "a", "app=api"), // kept key, new labels
		mk("ns3", "d", "app=web"),
		mk("ns3", "d", "app=db"), // same key again: replaces the earlier
		mk("", "node2"),
	}
	for _, o := range adds {
		require.NoError(t, r.Add(o))
	}
	require.Equal(t, 3, r.Len(), "distinct keys")
	require.Equal(t, before, s.Snapshot(), "readers must not see an uncommitted replacement")

	old := s.Commit(r, "50")
	require.Equal(t, before, old, "Commit returns the previous contents")
	require.Equal(t, "50", s.ResourceVersion())
	require.Equal(t, []string{"/node2", "ns1/a", "ns3/d"}, names(s.List()))
	d, _ := s.Get("ns3/d")
	require.Same(t, adds[2], d, "the later Add wins")
	requireConsistent(t, s)

	web, err := s.ByIndex("app", "web")
	require.NoError(t, err)
	require.Empty(t, web, "got %v: old index values must be gone", names(web))
	ns, _ := s.IndexValues(NamespaceIndex)
	require.Equal(t, []string{"ns1", "ns3"}, sorted(ns))

	// The old map now belongs to the caller: changing it leaves the store be.
	delete(old, "ns1/b")
	require.Equal(t, 3, s.Len())

	// Writes after a commit go to the new contents.
	require.NoError(t, up(s, mk("ns1", "e", "app=web")))
	requireConsistent(t, s)
}

func TestReplacementUsedUp(t *testing.T) {
	s := seeded(t)
	r := s.NewReplacement()
	require.NoError(t, r.Add(mk("ns", "x")))
	require.NotNil(t, s.Commit(r, "2"))

	require.ErrorIs(t, r.Add(mk("ns", "y")), ErrReplacementDone, "Add after Commit")
	require.Zero(t, r.Len(), "Len after Commit")
	require.Nil(t, s.Commit(r, "3"), "second Commit of the same replacement")
	require.Equal(t, []string{"ns/x"}, names(s.List()), "the second Commit changed the store")
	require.Equal(t, "2", s.ResourceVersion())
	requireConsistent(t, s)
}

func TestCommitMisuse(t *testing.T) {
	s, other := seeded(t), seeded(t)
	before := s.Snapshot()
	foreign := other.NewReplacement()
	require.NoError(t, foreign.Add(mk("ns", "x")))
	tests := []struct {
		name string
		r    *Replacement[obj]
	}{
		{"nil", nil},
		{"zero value", &Replacement[obj]{}},
		{"another store's", foreign},
	}
	for _, tt := range tests {
		require.Nil(t, s.Commit(tt.r, "9"), tt.name)
		require.Equal(t, before, s.Snapshot(), "%s: store changed", tt.name)
		require.Equal(t, "4", s.ResourceVersion(), "%s: rv changed", tt.name)
	}
	var zero *Replacement[obj]
	require.ErrorIs(t, zero.Add(mk("a", "b")), ErrReplacementDone)
	require.ErrorIs(t, (&Replacement[obj]{}).Add(mk("a", "b")), ErrReplacementDone)
	require.Zero(t, zero.Len())
	// The foreign replacement is still good for its own store.
	require.NotNil(t, other.Commit(foreign, "1"))
}

// TestReplacementAddError: a failing key or index function leaves the
// replacement as it was, including an earlier object with the same key.
func TestReplacementAddError(t *testing.T) {
	s := newTestStore()
	r := s.NewReplacement()
	good := mk("ns", "a", "app=web")
	require.NoError(t, r.Add(good))

	var ie *IndexError
	require.ErrorAs(t, r.Add(mk("ns", "a", "app=db", "bad=true")), &ie, "update to a bad object")
	require.Equal(t, "err", ie.Index)
	require.ErrorAs(t, r.Add(mk("ns", "b", "bad=true")), &ie, "new bad object")
	require.ErrorIs(t, r.Add(nil), ErrInvalidObject, "nil object")
	require.ErrorIs(t, r.Add(mk("ns", "")), ErrInvalidKey, "empty name")
	require.Equal(t, 1, r.Len())

	s.Commit(r, "1")
	got, ok := s.Get("ns/a")
	require.True(t, ok)
	require.Same(t, good, got)
	keys, _ := s.IndexKeys("app", "web")
	require.Equal(t, []string{"ns/a"}, keys)
	vals, _ := s.IndexValues("app")
	require.Equal(t, []string{"web"}, vals, "the refused update left no value behind")
	requireConsistent(t, s)
}

func TestCommitEmpty(t *testing.T) {
	s := seeded(t)
	old := s.Commit(s.NewReplacement(), "7")
	require.Len(t, old, 4)
	require.Zero(t, s.Len())
	for _, name := range s.IndexNames() {
		vals, err := s.IndexValues(name)
		require.NoError(t, err)
		require.Empty(t, vals, "index %q after an empty relist", name)
	}
}
