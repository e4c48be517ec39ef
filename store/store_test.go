package store

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// seeded returns a store holding a few objects across two namespaces and a
// cluster-scoped one.
func seeded(t *testing.T) *Store[obj] {
	t.Helper()
	s := newTestStore()
	for i, o := range []obj{
		mk("ns1", "a", "app=web", "tier=front"),
		mk("ns1", "b", "app=web"),
		mk("ns2", "c", "app=db"),
		mk("", "node", "role=worker"),
	} {
		_, existed, err := s.Upsert(o, string(rune('1'+i)))
		require.NoError(t, err)
		require.False(t, existed)
	}
	return s
}

func TestGet(t *testing.T) {
	s := seeded(t)
	tests := []struct {
		key    string
		wantOK bool
	}{
		{"ns1/a", true}, {"ns2/c", true}, {"node", true},
		{"ns1/c", false}, {"a", false}, {"", false}, {"/node", false},
	}
	for _, tt := range tests {
		got, ok := s.Get(tt.key)
		require.Equal(t, tt.wantOK, ok, "Get(%q): got ok=%v, want %v", tt.key, ok, tt.wantOK)
		if ok {
			require.Equal(t, tt.key, mustKey(t, got), "Get(%q) returned another object", tt.key)
		} else {
			require.Nil(t, got, "Get(%q) miss must return the zero value", tt.key)
		}
	}
}

func mustKey(t *testing.T, o obj) string {
	t.Helper()
	k, err := MetaKey(o)
	require.NoError(t, err)
	return k
}

func TestGetByObject(t *testing.T) {
	s := seeded(t)
	stored, _ := s.Get("ns1/a")
	tests := []struct {
		name    string
		obj     obj
		want    obj
		wantOK  bool
		wantErr error
	}{
		{"same key, other value", mk("ns1", "a"), stored, true, nil},
		{"absent", mk("ns1", "zz"), nil, false, nil},
		{"nil", nil, nil, false, ErrInvalidObject},
		{"empty name", mk("ns1", ""), nil, false, ErrInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := s.GetByObject(tt.obj)
			require.ErrorIs(t, err, tt.wantErr)
			require.Equal(t, tt.wantOK, ok, "got ok=%v, want %v", ok, tt.wantOK)
			require.Same(t, tt.want, got, "got %v, want the stored object %v", got, tt.want)
		})
	}
}

func TestListAndKeys(t *testing.T) {
	empty := newTestStore()
	require.Empty(t, empty.List())
	require.Empty(t, empty.ListKeys())
	require.Zero(t, empty.Len())
	require.Empty(t, empty.Snapshot())

	s := seeded(t)
	want := []string{"/node", "ns1/a", "ns1/b", "ns2/c"}
	require.Equal(t, want, names(s.List()), "List")
	require.Equal(t, []string{"node", "ns1/a", "ns1/b", "ns2/c"}, sorted(s.ListKeys()), "ListKeys")
	require.Equal(t, 4, s.Len(), "Len")
	keys, objs := s.Items()
	require.Len(t, objs, len(keys), "Items")
	require.Equal(t, []string{"node", "ns1/a", "ns1/b", "ns2/c"}, sorted(keys), "Items' keys")
	for i, k := range keys {
		got, _ := s.Get(k)
		require.Same(t, got, objs[i], "Items: %s is not the object of its key", k)
	}
	ek, eo := empty.Items()
	require.Empty(t, ek)
	require.Empty(t, eo)

	snap := s.Snapshot()
	require.Len(t, snap, 4)
	delete(snap, "ns1/a")
	_, ok := s.Get("ns1/a")
	require.True(t, ok, "Snapshot must be a copy")
}

func TestUpsert(t *testing.T) {
	s := seeded(t)
	first, _ := s.Get("ns1/a")
	repl := mk("ns1", "a", "app=api")
	old, existed, err := s.Upsert(repl, "10")
	require.NoError(t, err)
	require.True(t, existed, "got existed=false for an update")
	require.Same(t, first, old, "got old %v, want the replaced object", old)
	got, _ := s.Get("ns1/a")
	require.Same(t, repl, got)
	require.Equal(t, "10", s.ResourceVersion())
	require.Equal(t, 4, s.Len())

	old, existed, err = s.Upsert(mk("ns3", "new"), "11")
	require.NoError(t, err)
	require.False(t, existed)
	require.Nil(t, old, "no old object for an add")
	require.Equal(t, 5, s.Len())
	requireConsistent(t, s)
}

func TestDelete(t *testing.T) {
	tests := []struct {
		key       string
		rv        string
		wantOK    bool
		wantRV    string
		wantNames []string
	}{
		{"ns1/a", "9", true, "9", []string{"/node", "ns1/b", "ns2/c"}},
		{"node", "9", true, "9", []string{"ns1/a", "ns1/b", "ns2/c"}},
		{"ns1/zz", "9", false, "9", []string{"/node", "ns1/a", "ns1/b", "ns2/c"}},
		{"ns1/a", "", true, "4", []string{"/node", "ns1/b", "ns2/c"}},
		{"", "", false, "4", []string{"/node", "ns1/a", "ns1/b", "ns2/c"}},
	}
	for _, tt := range tests {
		s := seeded(t)
		old, ok := s.Delete(tt.key, tt.rv)
		require.Equal(t, tt.wantOK, ok, "Delete(%q): got ok=%v, want %v", tt.key, ok, tt.wantOK)
		if ok {
			require.Equal(t, tt.key, mustKey(t, old), "Delete(%q) returned another object", tt.key)
		}
		require.Equal(t, tt.wantRV, s.ResourceVersion(), "Delete(%q, %q): rv", tt.key, tt.rv)
		require.Equal(t, tt.wantNames, names(s.List()), "Delete(%q): remaining", tt.key)
		requireConsistent(t, s)
	}
}

func TestResourceVersion(t *testing.T) {
	s := newTestStore()
	require.Empty(t, s.ResourceVersion(), "new store")
	steps := []struct {
		name string
		do   func()
		want string
	}{
		{"upsert", func() { _, _, _ = s.Upsert(mk("n", "a"), "5") }, "5"},
		{"upsert without rv keeps it", func() { _, _, _ = s.Upsert(mk("n", "b"), "") }, "5"},
		{"failed upsert keeps it", func() { _, _, _ = s.Upsert(mk("n", "x", "bad=true"), "99") }, "5"},
		{"delete of absent key still records", func() { s.Delete("n/zz", "6") }, "6"},
		{"bookmark", func() { s.SetResourceVersion("7") }, "7"},
		{"commit", func() { s.Commit(s.NewReplacement(), "8") }, "8"},
		{"commit without rv keeps it", func() { s.Commit(s.NewReplacement(), "") }, "8"},
		{"explicit set to empty", func() { s.SetResourceVersion("") }, ""},
	}
	for _, st := range steps {
		st.do()
		require.Equal(t, st.want, s.ResourceVersion(), "after %s", st.name)
	}
}

func TestIndexReaders(t *testing.T) {
	s := seeded(t)
	tests := []struct {
		index, value string
		wantNames    []string
	}{
		{NamespaceIndex, "ns1", []string{"ns1/a", "ns1/b"}},
		{NamespaceIndex, "ns2", []string{"ns2/c"}},
		{NamespaceIndex, "", nil}, // cluster-scoped objects are not indexed
		{NamespaceIndex, "nope", nil},
		{"app", "web", []string{"ns1/a", "ns1/b"}},
		{"app", "db", []string{"ns2/c"}},
		{"labels", "tier=front", []string{"ns1/a"}},
		{"labels", "role=worker", []string{"/node"}},
		{"err", "anything", nil},
	}
	for _, tt := range tests {
		objs, err := s.ByIndex(tt.index, tt.value)
		require.NoError(t, err)
		require.Equal(t, tt.wantNames, nilIfEmpty(names(objs)), "ByIndex(%q, %q)", tt.index, tt.value)
		keys, err := s.IndexKeys(tt.index, tt.value)
		require.NoError(t, err)
		require.Len(t, keys, len(tt.wantNames), "IndexKeys(%q, %q): got %v", tt.index, tt.value, keys)
	}

	values := map[string][]string{
		NamespaceIndex: {"ns1", "ns2"},
		"app":          {"db", "web"},
		"labels":       {"app=db", "app=web", "role=worker", "tier=front"},
		"err":          nil,
	}
	for index, want := range values {
		got, err := s.IndexValues(index)
		require.NoError(t, err)
		require.Equal(t, want, nilIfEmpty(sorted(got)), "IndexValues(%q)", index)
	}
	require.Equal(t, []string{"app", "err", "labels", NamespaceIndex}, s.IndexNames())
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestUnknownIndex(t *testing.T) {
	s := seeded(t)
	calls := map[string]func() error{
		"ByIndex":     func() error { _, err := s.ByIndex("nodeName", "x"); return err },
		"IndexKeys":   func() error { _, err := s.IndexKeys("nodeName", "x"); return err },
		"IndexValues": func() error { _, err := s.IndexValues("nodeName"); return err },
	}
	for name, call := range calls {
		err := call()
		require.ErrorIs(t, err, ErrUnknownIndex, "%s", name)
		require.Contains(t, err.Error(), `"nodeName"`, "%s: the error must name the index", name)
		require.Contains(t, err.Error(), "known: app, err, labels, namespace", "%s: and list the known ones", name)
	}
}

func TestOptions(t *testing.T) {
	t.Run("nil indexer ignored", func(t *testing.T) {
		s := New(Options[obj]{Indexers: map[string]IndexFunc[obj]{"x": nil}})
		require.Equal(t, []string{NamespaceIndex}, s.IndexNames())
	})
	t.Run("namespace index can be overridden", func(t *testing.T) {
		s := New(Options[obj]{Indexers: map[string]IndexFunc[obj]{
			NamespaceIndex: func(o obj) ([]string, error) { return []string{"ns:" + o.Namespace}, nil },
		}})
		_, _, err := s.Upsert(mk("", "n"), "1")
		require.NoError(t, err)
		keys, err := s.IndexKeys(NamespaceIndex, "ns:")
		require.NoError(t, err)
		require.Equal(t, []string{"n"}, keys)
	})
	t.Run("zero options", func(t *testing.T) {
		s := New(Options[obj]{})
		_, _, err := s.Upsert(mk("a", "b"), "1")
		require.NoError(t, err)
		got, ok := s.Get("a/b")
		require.True(t, ok)
		require.Equal(t, "b", got.Name)
	})
}

func TestIndexErrorType(t *testing.T) {
	s := seeded(t)
	_, _, err := s.Upsert(mk("ns1", "x", "bad=true"), "1")
	var ie *IndexError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "err", ie.Index)
	require.Equal(t, "ns1/x", ie.Key)
	require.Equal(t, `store: index "err" on object "ns1/x": refusing x`, err.Error())
	require.NotNil(t, errors.Unwrap(err))
}

// TestManyIndexers covers stores with more indexers than a write keeps on
// its stack, over a slim caller type.
func TestManyIndexers(t *testing.T) {
	indexers := map[string]IndexFunc[*slim]{}
	for i := range maxStackIndexes + 2 {
		indexers[fmt.Sprint("ix", i)] = func(o *slim) ([]string, error) {
			return []string{fmt.Sprint(o.Node, "-", i)}, nil
		}
	}
	s := New(Options[*slim]{Indexers: indexers})
	mkSlim := func(name, node string) *slim {
		return &slim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Node: node}
	}
	for _, o := range []*slim{mkSlim("a", "n1"), mkSlim("b", "n1"), mkSlim("a", "n2")} {
		_, _, err := s.Upsert(o, "")
		require.NoError(t, err)
		requireConsistent(t, s)
	}
	for i := range maxStackIndexes + 2 {
		keys, err := s.IndexKeys(fmt.Sprint("ix", i), fmt.Sprint("n2-", i))
		require.NoError(t, err)
		require.Equal(t, []string{"ns/a"}, keys, "index ix%d", i)
	}
	r := s.NewReplacement()
	require.NoError(t, r.Add(mkSlim("c", "n3")))
	s.Commit(r, "")
	requireConsistent(t, s)
	s.Delete("ns/c", "")
	requireConsistent(t, s)
	require.Zero(t, s.Len())
}
