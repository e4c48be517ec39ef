package shard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// keyOwnedBy finds a key that r1 gives to o1, r2 to o2 and r3 to o3 (""
// for any owner, nil ring skipped).
func keyOwnedBy(t *testing.T, pairs ...any) string {
	t.Helper()
	for _, k := range testKeys(5000) {
		ok := true
		for i := 0; i < len(pairs); i += 2 {
			if pairs[i].(*Ring).Owner(k) != pairs[i+1].(string) {
				ok = false
				break
			}
		}
		if ok {
			return k
		}
	}
	t.Fatalf("no key with owners %v", pairs)
	return ""
}

// settledGate is member me's gate once ring r has settled.
func settledGate(me string, r *Ring) gate {
	g := gate{me: me}
	g.retarget(r)
	g.attempt(r)
	g.confirm(r)
	adopted := map[string]string{}
	for _, m := range r.Members() {
		adopted[m] = r.Version()
	}
	g.settle(adopted)
	return g
}

func TestGateZeroAllowsNothing(t *testing.T) {
	var g gate
	require.False(t, g.allows("a/b"))
	g = gate{me: "a"}
	r := NewRing([]string{"a"}, 0)
	g.retarget(r)
	require.False(t, g.allows("a/b"), "retargeted only")
	g.attempt(r)
	g.confirm(r)
	require.False(t, g.allows("a/b"), "published, no barrier yet")
	require.True(t, g.settle(map[string]string{"a": r.Version()}))
	require.True(t, g.allows("a/b"))
	g.fenced = true
	require.False(t, g.allows("a/b"), "fenced")
}

// TestGateJoin: a and b share ring ab; c joins. a stops keys it loses at
// once, keeps keys it owns under both rings, and starts nothing new
// (there is nothing new for a on a join) until the barrier.
func TestGateJoin(t *testing.T) {
	ab, abc := NewRing([]string{"a", "b"}, 0), NewRing([]string{"a", "b", "c"}, 0)
	keep := keyOwnedBy(t, ab, "a", abc, "a")
	lose := keyOwnedBy(t, ab, "a", abc, "c")
	other := keyOwnedBy(t, ab, "b", abc, "b")
	g := settledGate("a", ab)
	require.True(t, g.allows(keep))
	require.True(t, g.allows(lose))
	require.False(t, g.allows(other))

	require.True(t, g.retarget(abc))
	require.False(t, g.retarget(NewRing([]string{"c", "b", "a"}, 0)), "same members, same ring")
	require.True(t, g.allows(keep), "owned under both rings: no pause")
	require.False(t, g.allows(lose), "lost under the target: stops at once")
	g.attempt(abc)
	g.confirm(abc)
	require.True(t, g.allows(keep))
	require.False(t, g.settle(map[string]string{"a": abc.Version(), "b": ab.Version(), "c": abc.Version()}), "b has not adopted")
	require.True(t, g.settle(map[string]string{"a": abc.Version(), "b": abc.Version(), "c": abc.Version()}))
	require.True(t, g.allows(keep))
	require.False(t, g.allows(lose))
}

// TestGateGainWaitsForBarrier: c, joining, owns nothing before the
// barrier; then exactly its keys of the target.
func TestGateGainWaitsForBarrier(t *testing.T) {
	abc := NewRing([]string{"a", "b", "c"}, 0)
	gained := keyOwnedBy(t, abc, "c")
	g := gate{me: "c"}
	g.retarget(abc)
	g.attempt(abc)
	g.confirm(abc)
	require.False(t, g.allows(gained))
	require.False(t, g.settle(map[string]string{"a": abc.Version()}), "b missing")
	require.False(t, g.settle(map[string]string{"a": abc.Version(), "b": abc.Version()}), "the list does not show c's own lease with it")
	require.True(t, g.settle(map[string]string{"a": abc.Version(), "b": abc.Version(), "c": abc.Version()}))
	require.True(t, g.allows(gained))
}

// TestGateLoseThenRegain: a key a owned under the settled ring S, lost
// under a ring R it published, and owns again under T must wait for T's
// barrier: R's owner may have reconciled it meanwhile.
func TestGateLoseThenRegain(t *testing.T) {
	s := NewRing([]string{"a", "b"}, 0)
	r := NewRing([]string{"a", "b", "c"}, 0)
	k := keyOwnedBy(t, s, "a", r, "c")
	g := settledGate("a", s)
	g.retarget(r)
	g.attempt(r)
	g.confirm(r)
	g.retarget(s) // c died before the barrier of r passed
	require.False(t, g.allows(k), "published r: c may own k now")
	g.attempt(s)
	g.confirm(s)
	require.False(t, g.allows(k), "held still carries r")
	require.True(t, g.settle(map[string]string{"a": s.Version(), "b": s.Version()}))
	require.True(t, g.allows(k))
}

// TestGateUnconfirmedWriteCounts: a write whose outcome is unknown may
// have landed; the ring it carried counts as held.
func TestGateUnconfirmedWriteCounts(t *testing.T) {
	s := NewRing([]string{"a", "b"}, 0)
	r := NewRing([]string{"a", "b", "c"}, 0)
	k := keyOwnedBy(t, s, "a", r, "c")
	g := settledGate("a", s)
	g.retarget(r)
	g.attempt(r) // the write timed out: not confirmed
	g.retarget(s)
	require.False(t, g.allows(k))
}

// TestGateFailedWriteBlocksBarrier: after a failed write (it may land
// late), no barrier passes until a write succeeds.
func TestGateFailedWriteBlocksBarrier(t *testing.T) {
	s := NewRing([]string{"a", "b"}, 0)
	r := NewRing([]string{"a", "b", "c"}, 0)
	g := settledGate("a", s)
	g.retarget(r)
	g.attempt(r)
	g.failed() // the write of r may land after the next list, or never
	g.retarget(s)
	all := map[string]string{"a": s.Version(), "b": s.Version()} // the list still shows s
	require.False(t, g.settle(all))
	g.attempt(s)
	g.confirm(s) // a write guarded by resourceVersion succeeded: r can no longer land
	require.True(t, g.settle(all))
}

func TestGateHeldIsBounded(t *testing.T) {
	s := NewRing([]string{"a"}, 0)
	g := settledGate("a", s)
	for i := range maxHeld + 1 {
		r := NewRing([]string{"a", string(rune('b' + i))}, 0)
		g.retarget(r)
		g.attempt(r)
		g.confirm(r)
	}
	require.Empty(t, g.held, "too many rings without a barrier: hold nothing")
	require.False(t, g.allows(keyOwnedBy(t, g.target, "a")))
}

func TestBarrier(t *testing.T) {
	ab := NewRing([]string{"a", "b"}, 0)
	a := NewRing([]string{"a"}, 0)
	v := ab.Version()
	for _, tc := range []struct {
		name      string
		target    *Ring
		published *Ring
		adopted   map[string]string
		want      bool
	}{
		{"all adopted", ab, ab, map[string]string{"a": v, "b": v}, true},
		{"self not published", ab, a, map[string]string{"a": v, "b": v}, false},
		{"self published, the list shows otherwise", ab, ab, map[string]string{"a": a.Version(), "b": v}, false},
		{"other behind", ab, ab, map[string]string{"a": v, "b": a.Version()}, false},
		{"other unseen", ab, ab, map[string]string{"a": v}, false},
		{"alone", a, a, map[string]string{"a": a.Version()}, true},
		{"not a member", NewRing([]string{"b"}, 0), NewRing([]string{"b"}, 0), nil, false},
		{"no target", nil, nil, nil, false},
	} {
		got := barrier("a", tc.target, tc.published, tc.adopted)
		require.Equal(t, tc.want, got, tc.name)
	}
}

func TestDrained(t *testing.T) {
	ab := NewRing([]string{"a", "b"}, 0)
	mine, theirs := keyOwnedBy(t, ab, "a"), keyOwnedBy(t, ab, "b")
	require.True(t, drained("a", ab, nil))
	require.True(t, drained("a", ab, map[string]int{mine: 2}))
	require.False(t, drained("a", ab, map[string]int{mine: 1, theirs: 1}))
}

// TestGateSettlesCountsEveryHandover: the ring {a,b} settles, becomes
// {a,b,c} and settles, then {a,b} again with its old version: each
// barrier counts, so the last is told from the first.
func TestGateSettlesCountsEveryHandover(t *testing.T) {
	s := NewRing([]string{"a", "b"}, 0)
	r := NewRing([]string{"a", "b", "c"}, 0)
	g := settledGate("a", s)
	first := g.settles
	for _, ring := range []*Ring{r, s} {
		g.retarget(ring)
		g.attempt(ring)
		g.confirm(ring)
		adopted := map[string]string{}
		for _, m := range ring.Members() {
			adopted[m] = ring.Version()
		}
		require.True(t, g.settle(adopted))
	}
	require.Equal(t, s.Version(), g.settledVersion(), "the version is the first one again")
	require.Equal(t, first+2, g.settles)
	require.False(t, g.settle(map[string]string{"a": s.Version(), "b": s.Version()}), "no new handover")
	require.Equal(t, first+2, g.settles)
}
