package store

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConcurrentReadersDuringWrites runs readers against a writer that
// commits whole generations and updates objects in between. Readers check
// what must hold in every state they can see: an index never hands back an
// object without its value, Get returns the object of its key, and a List
// never mixes two generations (Commit is atomic). Run it under -race.
func TestConcurrentReadersDuringWrites(t *testing.T) {
	const gens, perGen, readers = 20, 50, 4
	genIndex := func(o obj) ([]string, error) { return []string{o.Labels["gen"]}, nil }
	s := New(Options[obj]{Indexers: map[string]IndexFunc[obj]{"app": appIndex, "gen": genIndex}})

	done := make(chan struct{})
	var wg sync.WaitGroup
	for range readers {
		wg.Go(func() { readUntil(t, s, done) })
	}
	for g := range gens {
		gen := strconv.Itoa(g)
		r := s.NewReplacement()
		for i := range perGen {
			require.NoError(t, r.Add(mk("ns", fmt.Sprint("o", i), "gen="+gen, "app=a")))
		}
		s.Commit(r, gen)
		for i := range perGen {
			name := fmt.Sprint("o", i)
			if i%7 == 0 {
				s.Delete("ns/"+name, gen)
				continue
			}
			_, _, err := s.Upsert(mk("ns", name, "gen="+gen, "app=b"), gen)
			require.NoError(t, err)
		}
	}
	close(done)
	wg.Wait()
	requireConsistent(t, s)
}

// readUntil reads in a loop until done is closed, reporting violations
// with t.Errorf (safe from any goroutine).
func readUntil(t *testing.T, s *Store[obj], done <-chan struct{}) {
	lastGen := -1
	for {
		select {
		case <-done:
			return
		default:
		}
		if !readOnce(t, s, &lastGen) {
			return
		}
	}
}

func readOnce(t *testing.T, s *Store[obj], lastGen *int) bool {
	gens := map[string]bool{}
	for _, o := range s.List() {
		gens[o.Labels["gen"]] = true
	}
	if len(gens) > 1 {
		t.Errorf("List mixed generations %v: Commit was not atomic", gens)
		return false
	}
	for g := range gens {
		n, _ := strconv.Atoi(g)
		if n < *lastGen {
			t.Errorf("generation went back from %d to %d", *lastGen, n)
			return false
		}
		*lastGen = n
	}
	for _, app := range []string{"a", "b"} {
		objs, err := s.ByIndex("app", app)
		if err != nil {
			t.Errorf("ByIndex: %v", err)
			return false
		}
		for _, o := range objs {
			if o == nil || o.Labels["app"] != app {
				t.Errorf("ByIndex(app, %s) returned %v", app, o)
				return false
			}
		}
	}
	if o, ok := s.Get("ns/o1"); ok && o.Name != "o1" {
		t.Errorf("Get(ns/o1) returned %s", o.Name)
		return false
	}
	_, _ = s.IndexValues("gen")
	_, _ = s.IndexKeys(NamespaceIndex, "ns")
	_ = s.ListKeys()
	if keys, objs := s.Items(); len(keys) != len(objs) {
		t.Errorf("Items returned %d keys and %d objects", len(keys), len(objs))
		return false
	}
	_ = s.Len()
	_ = s.ResourceVersion()
	_ = s.Snapshot()
	return true
}
