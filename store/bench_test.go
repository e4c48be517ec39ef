package store

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
)

const benchN = 100_000

// benchObjects returns n objects spread over n/100 namespaces, each with a
// distinct UID and one of ten app labels.
func benchObjects(n int) []obj {
	out := make([]obj, n)
	for i := range out {
		o := mk(fmt.Sprintf("ns-%d", i%max(n/100, 1)), fmt.Sprintf("pod-%d", i), fmt.Sprintf("app=app-%d", i%10))
		o.UID = types.UID(fmt.Sprintf("uid-%08d", i))
		out[i] = o
	}
	return out
}

func uidIndex(o obj) ([]string, error) { return []string{string(o.UID)}, nil }

func filled(b *testing.B, objs []obj, indexers map[string]IndexFunc[obj]) *Store[obj] {
	s := New(Options[obj]{Indexers: indexers})
	for _, o := range objs {
		_, _, err := s.Upsert(o, "1")
		require.NoError(b, err)
	}
	return s
}

// BenchmarkUpsert: add is a sync's first writes into an empty store;
// update replaces an object keeping its index values (the usual MODIFIED);
// move changes its app label so the index entries move.
func BenchmarkUpsert(b *testing.B) {
	objs := benchObjects(benchN)
	appOnly := map[string]IndexFunc[obj]{"app": appIndex}
	b.Run("add", func(b *testing.B) {
		s := New(Options[obj]{Indexers: appOnly})
		i := 0
		for b.Loop() {
			if i == len(objs) {
				b.StopTimer()
				s, i = New(Options[obj]{Indexers: appOnly}), 0
				b.StartTimer()
			}
			_, _, _ = s.Upsert(objs[i], "1")
			i++
		}
	})
	b.Run("update", func(b *testing.B) {
		s := filled(b, objs, appOnly)
		i := 0
		for b.Loop() {
			_, _, _ = s.Upsert(objs[i%len(objs)], "2")
			i++
		}
	})
	b.Run("move", func(b *testing.B) {
		s := filled(b, objs, appOnly)
		moved := benchObjects(benchN)
		for i, o := range moved {
			o.Labels["app"] = fmt.Sprintf("app-%d", (i+1)%10)
		}
		i := 0
		for b.Loop() {
			src := objs
			if (i/len(objs))%2 == 0 {
				src = moved
			}
			_, _, _ = s.Upsert(src[i%len(objs)], "2")
			i++
		}
	})
}

func BenchmarkGet(b *testing.B) {
	objs := benchObjects(benchN)
	s := filled(b, objs, nil)
	keys := s.ListKeys()
	b.Run("serial", func(b *testing.B) {
		i := 0
		for b.Loop() {
			_, _ = s.Get(keys[i%len(keys)])
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				_, _ = s.Get(keys[i%len(keys)])
				i++
			}
		})
	})
}

// BenchmarkByIndex reads one namespace of 100 objects out of 100k.
func BenchmarkByIndex(b *testing.B) {
	s := filled(b, benchObjects(benchN), nil)
	namespaces, err := s.IndexValues(NamespaceIndex)
	require.NoError(b, err)
	i := 0
	for b.Loop() {
		objs, _ := s.ByIndex(NamespaceIndex, namespaces[i%len(namespaces)])
		if len(objs) != 100 {
			b.Fatalf("got %d objects, want 100", len(objs))
		}
		i++
	}
}

// BenchmarkRelist adds 100k objects to a Replacement and commits it: the
// whole cost of installing a relist. BenchmarkCommit times the swap alone.
func BenchmarkRelist(b *testing.B) {
	objs := benchObjects(benchN)
	s := filled(b, objs, nil)
	for b.Loop() {
		r := s.NewReplacement()
		for _, o := range objs {
			_ = r.Add(o)
		}
		if old := s.Commit(r, "2"); len(old) != benchN {
			b.Fatalf("got %d old objects, want %d", len(old), benchN)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchN, "ns/object")
}

// BenchmarkCommit times the swap alone. Building a 100k replacement per
// iteration would dwarf it, so it swaps two prebuilt contents back and
// forth: after a Commit the store holds no reference to the old contents,
// so handing them back in is what a fresh relist would do.
func BenchmarkCommit(b *testing.B) {
	objs := benchObjects(benchN)
	s := filled(b, objs, nil)
	r := s.NewReplacement()
	for _, o := range objs {
		require.NoError(b, r.Add(o))
	}
	next := r.c
	var r2 Replacement[obj]
	for b.Loop() {
		r2.s, r2.c = s, next
		s.mu.RLock()
		next = s.cur
		s.mu.RUnlock()
		if old := s.Commit(&r2, "2"); len(old) != benchN {
			b.Fatalf("got %d old objects, want %d", len(old), benchN)
		}
	}
}

// BenchmarkOverhead measures the heap a store of 100k objects holds beyond
// the objects themselves (keys, map entries, index sets), per object.
func BenchmarkOverhead(b *testing.B) {
	cases := []struct {
		name     string
		indexers map[string]IndexFunc[obj]
	}{
		{"namespace", nil},
		{"namespace+uid", map[string]IndexFunc[obj]{"uid": uidIndex}},
		{"namespace+uid+app", map[string]IndexFunc[obj]{"uid": uidIndex, "app": appIndex}},
	}
	objs := benchObjects(benchN)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var perObject float64
			for b.Loop() {
				before := heapInUse()
				s := filled(b, objs, c.indexers)
				perObject = float64(heapInUse()-before) / benchN
				runtime.KeepAlive(s)
			}
			b.ReportMetric(perObject, "B/object")
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
