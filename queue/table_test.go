package queue

import (
	"math/rand/v2"
	"testing"
)

// checkTable verifies the table against model: the same keys with the
// same marks, every key on an unbroken probe run from its home slot, and
// no absent key found.
func checkTable(t *testing.T, tb *table[int], model map[int]mark) {
	t.Helper()
	if tb.len() != len(model) {
		t.Fatalf("len() = %d, want %d", tb.len(), len(model))
	}
	mask := len(tb.slots) - 1
	for i, s := range tb.slots {
		if s.mark == 0 {
			continue
		}
		for j := int(s.hash) & mask; j != i; j = (j + 1) & mask {
			if tb.slots[j].mark == 0 {
				t.Fatalf("key %d in slot %d: empty slot %d between it and its home", s.key, i, j)
			}
		}
	}
	for k, want := range model {
		i, found := tb.find(k, tb.hash(k))
		if !found {
			t.Fatalf("find(%d): not found", k)
		}
		if got := tb.mark(i); got != want {
			t.Fatalf("mark of %d = %d, want %d", k, got, want)
		}
	}
}

// The table agrees with a map through random inserts, updates and
// deletes, across growing and shrinking.
func TestTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tb := newTable[int]()
	model := map[int]mark{}
	grew, shrank := false, false
	const bigKeys, smallKeys = 2000, 64
	for step := range 200000 {
		// Phases: a couple of thousand keys, then a few dozen for long
		// enough that the table shrinks.
		keys := bigKeys
		size := len(tb.slots)
		if step%100000 >= 20000 {
			keys = smallKeys
			// Delete the big phase's keys, one a step.
			if old := smallKeys + step%bigKeys; old < bigKeys {
				if i, found := tb.find(old, tb.hash(old)); found {
					tb.deleteAt(i)
					delete(model, old)
				}
			}
		}
		k := rng.IntN(keys)
		h := tb.hash(k)
		i, found := tb.find(k, h)
		if _, ok := model[k]; ok != found {
			t.Fatalf("step %d: find(%d) found = %v, want %v", step, k, found, ok)
		}
		m := mark(2 + 2*rng.IntN(1000))
		switch {
		case !found:
			tb.insertAt(i, k, h, m)
			model[k] = m
		case rng.IntN(4) == 0:
			tb.setMark(i, m)
			model[k] = m
		default:
			tb.deleteAt(i)
			delete(model, k)
		}
		grew = grew || len(tb.slots) > size
		shrank = shrank || len(tb.slots) < size
		if step%997 == 0 {
			checkTable(t, &tb, model)
		}
	}
	checkTable(t, &tb, model)
	if !grew || !shrank {
		t.Errorf("grew = %v, shrank = %v; the test should exercise both", grew, shrank)
	}
}

// Keys that share a home slot stay findable when one in the middle of
// their probe run is deleted.
func TestTableDeleteKeepsCollidingKeys(t *testing.T) {
	tb := newTable[int]()
	// Find keys with the same home slot in a table of minTable slots.
	tb.insertAt(0, -1, tb.hash(-1), 2) // allocate the minimum table
	i, _ := tb.find(-1, tb.hash(-1))
	tb.deleteAt(i)
	mask := uint64(len(tb.slots) - 1)
	var same []int
	for k := 0; len(same) < 4; k++ {
		if tb.hash(k)&mask == 3 {
			same = append(same, k)
		}
	}
	model := map[int]mark{}
	for n, k := range same {
		h := tb.hash(k)
		i, _ := tb.find(k, h)
		tb.insertAt(i, k, h, mark(2*n+2))
		model[k] = mark(2*n + 2)
	}
	checkTable(t, &tb, model)
	for _, k := range []int{same[1], same[0], same[3], same[2]} {
		i, found := tb.find(k, tb.hash(k))
		if !found {
			t.Fatalf("find(%d): not found", k)
		}
		tb.deleteAt(i)
		delete(model, k)
		checkTable(t, &tb, model)
	}
}

// A table that swings between empty and a peak keeps its slots; one that
// stays small afterwards gives them back.
func TestTableShrinksOnlyAfterSteadySmallUse(t *testing.T) {
	tb := newTable[int]()
	add := func(k int) {
		h := tb.hash(k)
		i, _ := tb.find(k, h)
		tb.insertAt(i, k, h, 2)
	}
	del := func(k int) {
		i, found := tb.find(k, tb.hash(k))
		if !found {
			t.Fatalf("find(%d): not found", k)
		}
		tb.deleteAt(i)
	}
	for range 3 {
		for k := range 1000 {
			add(k)
		}
		for k := range 1000 {
			del(k)
		}
	}
	if got := len(tb.slots); got < 1024 {
		t.Fatalf("%d slots after swings to 1000 keys, want the peak kept (>= 1024)", got)
	}
	for k := range 20000 {
		add(k)
		del(k)
	}
	if got := len(tb.slots); got > 4*minTable {
		t.Errorf("%d slots after steady use at one key, want <= %d", got, 4*minTable)
	}
}
