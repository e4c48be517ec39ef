package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// slim is a caller's slim type embedding ObjectMeta.
type slim struct {
	metav1.ObjectMeta
	Node string
}

// nameOnly has GetName but no GetNamespace.
type nameOnly struct{ name string }

func (n *nameOnly) GetName() string { return n.name }

func TestMetaKey(t *testing.T) {
	var nilPOM *metav1.PartialObjectMetadata
	var nilSlim *slim
	var nilIface metav1.Object
	tests := []struct {
		name    string
		obj     any
		want    string
		wantErr string // substring; "" means no error
	}{
		{"namespaced", mk("ns", "a"), "ns/a", ""},
		{"cluster scoped", mk("", "node-1"), "node-1", ""},
		{"slim struct", &slim{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: "y"}}, "x/y", ""},
		{"unicode", mk("ns", "ünï"), "ns/ünï", ""},
		{"nil", nil, "", "nil object"},
		{"nil interface", nilIface, "", "nil object"},
		{"nil pointer", nilPOM, "", "nil *v1.PartialObjectMetadata"},
		{"nil slim pointer", nilSlim, "", "nil *store.slim"},
		{"no methods", 42, "", "type int has no GetNamespace and GetName"},
		{"struct value without pointer methods", slim{}, "", "type store.slim has no GetNamespace"},
		{"only GetName", &nameOnly{name: "a"}, "", "has no GetNamespace"},
		{"empty name", mk("ns", ""), "", `in namespace "ns" has an empty name`},
		{"empty name and namespace", mk("", ""), "", "empty name"},
		{"slash in name", mk("ns", "a/b"), "", `name "a/b" contains '/'`},
		{"slash in name, cluster scoped", mk("", "a/b"), "", `name "a/b" contains '/'`},
		{"slash in namespace", mk("a/b", "c"), "", `namespace "a/b" contains '/'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MetaKey(tt.obj)
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, tt.want, got, "got %q, want %q", got, tt.want)
				return
			}
			require.Error(t, err, "got key %q, want an error", got)
			require.ErrorIs(t, err, ErrInvalidObject)
			require.Contains(t, err.Error(), tt.wantErr, "got %q, want it to contain %q", err, tt.wantErr)
			require.Empty(t, got, "no key alongside an error")
		})
	}
}

func TestStoreKey(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		key     KeyFunc[obj]
		obj     obj
		want    string
		wantErr error
	}{
		{"default is MetaKey", nil, mk("ns", "a"), "ns/a", nil},
		{"default refuses nil", nil, nil, "", ErrInvalidObject},
		{"custom", func(o obj) (string, error) { return string(o.UID), nil }, mk("ns", "a"), "", ErrInvalidKey},
		{"custom uid", func(o obj) (string, error) { return "uid-" + o.Name, nil }, mk("ns", "a"), "uid-a", nil},
		{"custom error wrapped", func(obj) (string, error) { return "", boom }, mk("ns", "a"), "", boom},
		{"custom error also ErrInvalidKey", func(obj) (string, error) { return "x", boom }, mk("ns", "a"), "", ErrInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Options[obj]{Key: tt.key})
			got, err := s.Key(tt.obj)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr, "got err %v, want %v", err, tt.wantErr)
				_, _, uerr := s.Upsert(tt.obj, "1")
				require.ErrorIs(t, uerr, tt.wantErr, "Upsert must return the key error")
				require.Zero(t, s.Len(), "store unchanged after a key error")
				require.Empty(t, s.ResourceVersion(), "rv unchanged after a key error")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got, "got %q, want %q", got, tt.want)
		})
	}
}

// TestNoGetNamespace: a type without GetNamespace works with its own key
// function and is simply absent from the namespace index.
func TestNoGetNamespace(t *testing.T) {
	s := New(Options[*nameOnly]{Key: func(n *nameOnly) (string, error) { return n.name, nil }})
	_, _, err := s.Upsert(&nameOnly{name: "a"}, "1")
	require.NoError(t, err)
	got, ok := s.Get("a")
	require.True(t, ok)
	require.Equal(t, "a", got.name)
	vals, err := s.IndexValues(NamespaceIndex)
	require.NoError(t, err)
	require.Empty(t, vals, "got namespace values %v, want none", vals)
	// A nil pointer is still refused by the built-in index, not a panic.
	_, _, err = New(Options[*nameOnly]{Key: func(*nameOnly) (string, error) { return "k", nil }}).Upsert(nil, "2")
	var ie *IndexError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, NamespaceIndex, ie.Index)
}

// FuzzMetaKey checks that MetaKey never panics, and that every key it
// returns splits back into exactly the namespace and name it came from,
// so two different objects never share a key.
func FuzzMetaKey(f *testing.F) {
	for _, seed := range [][2]string{
		{"ns", "a"}, {"", "a"}, {"", ""}, {"ns", ""}, {"a/b", "c"}, {"a", "b/c"},
		{"/", "/"}, {"ns", "a\x00b"}, {"\xff", "ü"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, ns, name string) {
		key, err := MetaKey(mk(ns, name))
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidObject)
			require.True(t, name == "" || strings.Contains(ns+name, "/"), "unexpected error %v", err)
			return
		}
		gotNS, gotName, found := strings.Cut(key, "/")
		if !found {
			gotNS, gotName = "", key
		}
		require.Equal(t, [2]string{ns, name}, [2]string{gotNS, gotName}, "key %q does not split back", key)
	})
}
