package shard

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func testKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/cm-%d", i%7, i)
	}
	return keys
}

func randomMembers(rng *rand.Rand, n int) []string {
	ms := make([]string, n)
	for i := range ms {
		ms[i] = fmt.Sprintf("replica-%x_%d", rng.Uint64(), i)
	}
	return ms
}

// TestRingBalance: with the default virtual nodes, 3 members and 1,000
// keys, the busiest member holds at most 1.25 times the mean, for many
// random member names.
func TestRingBalance(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := testKeys(1000)
	worst := 0.0
	for trial := range 200 {
		ms := randomMembers(rng, 3)
		if trial == 0 {
			ms = []string{"a", "b", "c"}
		}
		r := NewRing(ms, 0)
		load := map[string]int{}
		for _, k := range keys {
			load[r.Owner(k)]++
		}
		require.Len(t, load, 3)
		mx := 0
		for _, n := range load {
			mx = max(mx, n)
		}
		ratio := float64(mx) / (1000.0 / 3)
		worst = max(worst, ratio)
		require.LessOrEqual(t, ratio, 1.25, "members %v: loads %v", ms, load)
	}
	t.Logf("worst max/mean over 200 member sets: %.3f", worst)
}

// TestRingAddMovesOnlyToNewMember: adding a member moves about 1/N of
// the keys, every one of them to the new member.
func TestRingAddMovesOnlyToNewMember(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	keys := testKeys(2000)
	for range 50 {
		n := 1 + rng.IntN(6)
		ms := randomMembers(rng, n+1)
		before, after := NewRing(ms[:n], 0), NewRing(ms, 0)
		moved := 0
		for _, k := range keys {
			if o := after.Owner(k); o != before.Owner(k) {
				require.Equal(t, ms[n], o, "key %s moved between old members", k)
				moved++
			}
		}
		frac := float64(moved) / float64(len(keys))
		want := 1.0 / float64(n+1)
		require.InDelta(t, want, frac, want*0.4, "%d -> %d members: %d of %d keys moved", n, n+1, moved, len(keys))
	}
}

// TestRingRemoveMovesOnlyItsKeys: removing a member moves its keys and
// no other.
func TestRingRemoveMovesOnlyItsKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	keys := testKeys(2000)
	for range 50 {
		ms := randomMembers(rng, 2+rng.IntN(6))
		gone := rng.IntN(len(ms))
		rest := append(append([]string(nil), ms[:gone]...), ms[gone+1:]...)
		before, after := NewRing(ms, 0), NewRing(rest, 0)
		for _, k := range keys {
			if o := before.Owner(k); o != ms[gone] {
				require.Equal(t, o, after.Owner(k), "key %s of a remaining member moved", k)
			} else {
				require.NotEqual(t, ms[gone], after.Owner(k))
			}
		}
	}
}

// TestRingVersion: the version depends on the set of members and the
// virtual nodes only, not on order or duplicates.
func TestRingVersion(t *testing.T) {
	for _, tc := range []struct {
		a, b   []string
		va, vb int
		same   bool
	}{
		{[]string{"a", "b"}, []string{"b", "a"}, 0, 0, true},
		{[]string{"a", "b", "b", ""}, []string{"a", "b"}, 0, 0, true},
		{[]string{"a", "b"}, []string{"a", "b", "c"}, 0, 0, false},
		{[]string{"ab"}, []string{"a", "b"}, 0, 0, false},
		{[]string{"a"}, []string{"a"}, 10, 11, false},
	} {
		ra, rb := NewRing(tc.a, tc.va), NewRing(tc.b, tc.vb)
		require.Equal(t, tc.same, ra.Version() == rb.Version(), "%v (%d) vs %v (%d)", tc.a, tc.va, tc.b, tc.vb)
		if tc.same {
			for _, k := range testKeys(100) {
				require.Equal(t, ra.Owner(k), rb.Owner(k))
			}
		}
	}
	var nilRing *Ring
	require.Equal(t, "", nilRing.Owner("x"))
	require.Equal(t, "", NewRing(nil, 0).Owner("x"))
	require.False(t, nilRing.Has("a"))
	require.True(t, NewRing([]string{"b", "a"}, 0).Has("a"))
}

func BenchmarkRingOwner(b *testing.B) {
	r := NewRing([]string{"a", "b", "c"}, 0)
	keys := testKeys(1024)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = r.Owner(keys[i%len(keys)])
	}
}
