package store

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type obj = *metav1.PartialObjectMetadata

// mk builds an object; labels are "k=v" pairs.
func mk(ns, name string, labels ...string) obj {
	o := &metav1.PartialObjectMetadata{}
	o.Namespace, o.Name = ns, name
	if len(labels) > 0 {
		o.Labels = make(map[string]string, len(labels))
		for _, kv := range labels {
			k, v, _ := cut(kv)
			o.Labels[k] = v
		}
	}
	return o
}

func cut(kv string) (string, string, bool) {
	for i := range len(kv) {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

// appIndex indexes by the "app" label, if present.
func appIndex(o obj) ([]string, error) {
	if v, ok := o.Labels["app"]; ok {
		return []string{v}, nil
	}
	return nil, nil
}

// labelIndex indexes by every "k=v" label pair: a multi-value index.
func labelIndex(o obj) ([]string, error) {
	out := make([]string, 0, len(o.Labels))
	for k, v := range o.Labels {
		out = append(out, k+"="+v)
	}
	return out, nil
}

// errIndex fails for objects labelled bad=true.
func errIndex(o obj) ([]string, error) {
	if o.Labels["bad"] == "true" {
		return nil, fmt.Errorf("refusing %s", o.Name)
	}
	return nil, nil
}

func newTestStore() *Store[obj] {
	return New(Options[obj]{Indexers: map[string]IndexFunc[obj]{
		"app": appIndex, "labels": labelIndex, "err": errIndex,
	}})
}

// requireConsistent checks every index against one rebuilt from the
// objects, and the bucket invariants (never empty; a map only for 2+ keys).
func requireConsistent[T any](t testing.TB, s *Store[T]) {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	require.Len(t, s.cur.indexes, len(s.indexers), "one index per indexer")
	for i, ixr := range s.indexers {
		want := map[string][]string{}
		for k, o := range s.cur.items {
			set, err := ixr.values(o)
			if err != nil { // require only on failure: it is costly in a loop
				require.NoError(t, err, "index %q on %q", ixr.name, k)
			}
			var buf [1]string
			for _, v := range dedup(set.slice(&buf)) {
				want[v] = append(want[v], k)
			}
		}
		got := map[string][]string{}
		for v, b := range s.cur.indexes[i] {
			if b.len() == 0 {
				t.Fatalf("index %q value %q: empty bucket kept", ixr.name, v)
			}
			if b.set != nil && (len(b.set) < 2 || b.one != "") {
				t.Fatalf("index %q value %q: got bucket %+v, want a map only for 2+ keys and one empty then", ixr.name, v, b)
			}
			got[v] = b.appendKeys(nil)
		}
		sortAll(want)
		sortAll(got)
		require.Equal(t, want, got, "index %q: got (left) vs rebuilt from objects (right)", ixr.name)
	}
}

func dedup(vals []string) []string {
	out := slices.Clone(vals)
	slices.Sort(out)
	return slices.Compact(out)
}

func sortAll(m map[string][]string) {
	for k := range maps.Keys(m) {
		slices.Sort(m[k])
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func names(objs []obj) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.Namespace + "/" + o.Name
	}
	slices.Sort(out)
	return out
}

// namespaceIndexFunc is the built-in namespace index as an IndexFunc, for
// models that rebuild indexes from objects.
func namespaceIndexFunc[T any](o T) ([]string, error) {
	ns, err := objectNamespace(o)
	if err != nil || ns == "" {
		return nil, err
	}
	return []string{ns}, nil
}
