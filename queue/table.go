package queue

import "hash/maphash"

// table maps the keys that are ready or being processed to their mark.
// It is an open-addressing hash table with linear probing, built for the
// queue's hot path:
//
//   - the hash of a key is computed by the caller with hash, which reads
//     only the immutable seed, so Add and Done hash outside the queue's
//     lock and each operation hashes its key once;
//   - find returns a slot index, so a lookup followed by an update or a
//     delete probes once;
//   - deletion shifts the following entries back instead of leaving
//     tombstones, so a queue that sees a stream of distinct keys keeps
//     short probe sequences and never needs a cleanup pass.
//
// The table doubles when it would be more than three quarters full. It
// halves when it is at most an eighth full and has deleted four times its
// size since the last resize; like the ready ring's, that delay keeps a
// queue whose depth swings between empty and a peak from reallocating on
// every swing, while a queue that stays small gives its memory back. It is
// not safe for concurrent use: the queue guards it with its mutex (hash
// excepted).
type table[K comparable] struct {
	seed    maphash.Seed
	slots   []slot[K] // len(slots) is 0 or a power of two
	n       int       // slots in use
	deletes int       // deletions since the last resize
}

// slot is one entry of a table. A slot whose mark is zero is empty.
type slot[K comparable] struct {
	key  K
	hash uint64 // hash of key, kept so that probes and moves never rehash
	mark mark
}

// minTable is the smallest number of slots a table allocates and never
// shrinks below.
const minTable = 16

// newTable returns an empty table with a random seed.
func newTable[K comparable]() table[K] {
	return table[K]{seed: maphash.MakeSeed()}
}

// hash returns the hash of k that find and insertAt take. It is safe to
// call concurrently with any other method.
func (t *table[K]) hash(k K) uint64 { return maphash.Comparable(t.seed, k) }

// len returns the number of keys in the table.
func (t *table[K]) len() int { return t.n }

// find looks k up; h must be t.hash(k). It returns k's slot and true, or,
// if k is absent, the empty slot where insertAt can put it and false. The
// index is valid until the next insertAt or deleteAt.
func (t *table[K]) find(k K, h uint64) (i int, found bool) {
	if len(t.slots) == 0 {
		return -1, false
	}
	mask := len(t.slots) - 1
	for i = int(h) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.mark == 0 {
			return i, false
		}
		if s.hash == h && s.key == k {
			return i, true
		}
	}
}

// mark returns the mark of the key in slot i, found by find.
func (t *table[K]) mark(i int) mark { return t.slots[i].mark }

// setMark changes the mark of the key in slot i, found by find. m must
// not be zero: use deleteAt to remove a key.
func (t *table[K]) setMark(i int, m mark) { t.slots[i].mark = m }

// insertAt adds k, with hash h and mark m (not zero), in slot i, which
// find returned for k with found false.
func (t *table[K]) insertAt(i int, k K, h uint64, m mark) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.resize(max(minTable, 2*len(t.slots)))
		i = t.emptySlot(h)
	}
	t.slots[i] = slot[K]{key: k, hash: h, mark: m}
	t.n++
}

// deleteAt removes the key in slot i, found by find. The entries after it
// in its probe run move back so that every key stays reachable from its
// home slot without a gap in between.
func (t *table[K]) deleteAt(i int) {
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].mark != 0; j = (j + 1) & mask {
		home := int(t.slots[j].hash) & mask
		// The entry at j may fill the hole at i only if i lies on its
		// probe path, between its home and j.
		if (j-home)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = slot[K]{} // also drops the key for the collector
	t.n--
	t.deletes++
	if len(t.slots) > minTable && 8*t.n <= len(t.slots) && t.deletes >= 4*len(t.slots) {
		t.resize(len(t.slots) / 2)
	}
}

// emptySlot returns the first empty slot on the probe path of hash h. The
// table must have one.
func (t *table[K]) emptySlot(h uint64) int {
	mask := len(t.slots) - 1
	i := int(h) & mask
	for t.slots[i].mark != 0 {
		i = (i + 1) & mask
	}
	return i
}

// resize moves every entry into a new array of size slots, which must
// leave the table less than full.
func (t *table[K]) resize(size int) {
	old := t.slots
	t.slots = make([]slot[K], size)
	t.deletes = 0
	for _, s := range old {
		if s.mark != 0 {
			t.slots[t.emptySlot(s.hash)] = s
		}
	}
}
