package shard

// maxHeld bounds the chain of rings a member keeps between two barriers.
// A longer chain (many membership changes without the barrier passing)
// is dropped: the member then holds nothing until the next barrier,
// which is safe and only delays work.
const maxHeld = 8

// gate is what decides, for one member, whether a key may start a
// reconcile. It is pure: the member's round (member.go) moves it from
// state to state, and Begin reads it. Its zero value allows nothing.
//
// The rule: key k may start on member me when
//
//	target.Owner(k) == me && published.Owner(k) == me && held.Owner(k) == me for every ring in held
//
// and the member is not fenced.
//
//   - target (T) is the ring of the members this member sees live now. A
//     key me would lose under T stops at once: no new reconcile starts.
//   - published (P) is the ring whose version me's Lease is known to
//     carry as adopted. While the Lease says adopted=v, me reconciles
//     only keys it owns under ring v (invariant I1, which the other
//     members' barriers rely on). P moves to T only once no reconcile of
//     a key lost under T is in flight (drained).
//   - held are the rings me may have published since the last barrier,
//     oldest first; the first is the ring of that barrier. A key owned
//     under every one of them has been me's without a break, so it goes
//     on without waiting. A key gained under T waits for the barrier:
//     every live member of T shows adopted = version(T). Then held
//     becomes [T]. An empty held (before the first barrier) allows
//     nothing.
//
// Why held and not only the last barrier's ring: a key me owned under
// the barrier's ring S, lost under a ring R it then published, and owns
// again under T may have been reconciled by R's owner after R's barrier
// passed; me must wait for T's barrier before touching it again.
type gate struct {
	me        string
	target    *Ring
	published *Ring
	held      []*Ring
	fenced    bool
	// settles counts the barriers passed (settle returning true). A ring
	// whose members leave and come back has the version it had before;
	// this count still moves, so a caller can tell a new handover from
	// the last one.
	settles uint64
	// unsure is true from a failed write of this member's Lease until
	// the next successful one. A failed write may still land (its
	// response was lost, or it is applied late); until a later write
	// succeeds, guarded by resourceVersion, the Lease may carry what the
	// failed one said, so no barrier may pass.
	unsure bool
}

// allows reports whether key may start a reconcile now.
func (g *gate) allows(key string) bool {
	if g.fenced || len(g.held) == 0 || g.target.Owner(key) != g.me || g.published.Owner(key) != g.me {
		return false
	}
	for _, r := range g.held {
		if r.Owner(key) != g.me {
			return false
		}
	}
	return true
}

// retarget moves the target to t. It reports whether it changed.
func (g *gate) retarget(t *Ring) bool {
	if g.target.Version() == t.Version() {
		return false
	}
	g.target = t
	return true
}

// attempt records that a write of adopted = version(r) is about to be
// sent: whatever its outcome, the Lease may carry it from now on, so r
// joins held (when anything is held) before the write leaves.
func (g *gate) attempt(r *Ring) {
	if len(g.held) == 0 || g.held[len(g.held)-1].Version() == r.Version() {
		return
	}
	if len(g.held) == maxHeld {
		g.held = nil
		return
	}
	g.held = append(g.held, r)
}

// confirm records a successful write of adopted = version(r). Any
// earlier write that failed has landed before it or never will (its
// resourceVersion precondition no longer holds).
func (g *gate) confirm(r *Ring) { g.published, g.unsure = r, false }

// failed records a write of the Lease that failed: its outcome is
// unknown.
func (g *gate) failed() { g.unsure = true }

// settle applies the barrier: when me's Lease is known to carry the
// target's version (no write failed since the last that succeeded) and
// every live member of the target, me included, shows it in the list
// (adopted, read from their Leases), held becomes [target]. It
// reports whether held changed.
func (g *gate) settle(adopted map[string]string) bool {
	if g.unsure || !barrier(g.me, g.target, g.published, adopted) {
		return false
	}
	if len(g.held) == 1 && g.held[0].Version() == g.target.Version() {
		return false
	}
	g.held = []*Ring{g.target}
	g.settles++
	return true
}

// barrier is the handover condition for ring t: me has published t (a
// confirmed write, and the list shows it: adopted holds me too), and
// every other member of t has published t's version. Members outside t
// are, by the time t is built, dead by the liveness rule (their renew
// deadline, and so their self-fence, has passed) or released.
func barrier(me string, t, published *Ring, adopted map[string]string) bool {
	if t == nil || !t.Has(me) || published.Version() != t.Version() {
		return false
	}
	for _, m := range t.Members() {
		if adopted[m] != t.Version() {
			return false
		}
	}
	return true
}

// drained reports whether no key in flight would be lost under t: the
// condition for publishing t. inflight are the keys being reconciled.
func drained(me string, t *Ring, inflight map[string]int) bool {
	for k := range inflight {
		if t.Owner(k) != me {
			return false
		}
	}
	return true
}

// settledVersion is the version of the ring of the last barrier, "" before it.
func (g *gate) settledVersion() string {
	if len(g.held) == 0 {
		return ""
	}
	return g.held[0].Version()
}
