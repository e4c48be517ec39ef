// Package shard splits the keys of one controller across several
// replicas, through coordination.k8s.io/v1 Leases: no webhook, no
// sharder deployment, nothing to install in the cluster.
//
//	m, err := shard.New(shard.Config{Client: c, Namespace: "kube-system", Ring: "my-controller",
//		Identity: hostname + "_" + uuid})
//	err = m.Run(ctx, func(ctx context.Context) { runControllers(ctx) })
//	// before each reconcile of key:
//	ctx, done, ok := m.Begin(ctx, key) // ok false: not this replica's key now
//
// Package controller does this for every controller of a manager
// (ManagerOptions.Sharding).
//
// # Membership
//
//   - Each replica (member) holds one Lease, named LeaseName(ring,
//     identity), labelled RingLabel=<ring>, holderIdentity its identity,
//     renewed every RetryPeriod (15 s lease, 10 s renew deadline, 2 s
//     retry by default, as package leader). Every write is guarded by
//     the resourceVersion read (a create for the first).
//   - A member judges another dead when that member's Lease has not
//     changed (its resourceVersion) for the leaseDurationSeconds it
//     wrote, since the observer saw it change, by the observer's own
//     clock; a released Lease (holderIdentity "") is out at once. Remote
//     renewTimes are never compared with the local clock. A Lease that
//     vanishes keeps its last observation, so deleting one does not
//     shorten the wait of the members that saw it.
//   - A member that cannot renew within RenewDeadline of the start of its
//     last successful round fences itself: its leader.Term ends, so
//     Begin and BeginWrite refuse every key from that instant (by the
//     clock at each call) and the contexts of reconciles in flight are
//     cancelled by the term's timer, whatever Run's goroutine is doing;
//     then Run returns ErrFenced (which kube.IsFenced also matches). As
//     in package leader, the others cannot judge it dead before
//     LeaseDuration after they saw that renew, so a fenced member has
//     stopped LeaseDuration - RenewDeadline (5 s) before its keys move,
//     provided clock rates differ by less than LeaseDuration/RenewDeadline
//     and reconciles return within that margin once their context is
//     cancelled. Package controller also refuses their writes from that
//     instant (BeginWrite), so one that ignores its context cannot write;
//     a write already on the wire is covered by the same margin.
//   - Writes for a key that moves without a fence: BeginWrite allows a
//     write only while its key is in flight here (a Begin or BeginWrite
//     without its done) or may start here, and holds the key's handover until the write
//     returned, as a reconcile does; so the new owner's barrier passes
//     only after the old owner's writes for the key came back. A write
//     that came back without a known outcome (no answer, a 500, 502, 503 or 504:
//     its done says so) or was cut off (by the term's end or its own
//     deadline) may still be applied by the server after that: such a
//     cut (leader.Term.Hold) keeps the key in flight until
//     LeaseDuration - RenewDeadline after it, the margin a write on its
//     way has when a term lapses, and a member leaving the ring waits
//     the same after its last cut before it releases its Lease.
//   - A member whose own Lease shows holderIdentity "" after it has
//     written it (a hand edit, or a twin process with its identity
//     stopping) fences at its next round instead of taking the Lease
//     back, as package leader does: the others count it out at once.
//   - The other members delete a Lease released or dead once it has been
//     unchanged for two lease durations since they saw it change (guarded
//     by its resourceVersion). A released Lease is left that
//     long, not deleted at once, so that every member reads the release:
//     one that never saw it keeps its last observation and would wait a
//     whole lease duration, and the ring's barrier with it.
//
// Deleting a member's Lease by hand voids the guarantee for the members
// that never saw that Lease (one that joins after the delete, or had not
// listed it since it was created): they count the member out while it
// still reconciles, until its next renew finds the Lease gone and fences
// it (within about one retry period). Releasing it by hand does the same
// for every member, which counts it out at once: it fences at its next
// round, while the others need two rounds of their own to pass a barrier
// without it, a race it usually but not always wins.
//
// # Assignment
//
// A consistent hash ring (ring.go) with VirtualNodes points per live
// member (DefaultVirtualNodes: at most 1.25 times the mean load for 3
// members and 1,000 keys). Keys are strings, in package controller the
// primary object's "namespace/name"; owned objects map to their owner's
// key and so follow it. A new member takes about 1/N of the keys, all
// from the others; a member that leaves gives away only its own.
//
// # Handover without overlap
//
// Each member publishes in its Lease's AdoptedAnnotation the version
// (a hash of the sorted members) of the ring it has adopted. gate.go
// holds the rule, round.go one round:
//
//  1. When a member's view of the live members changes to ring T, it
//     stops starting reconciles of the keys it loses under T at once,
//     waits for the ones in flight to return, and only then writes
//     adopted = version(T). Invariant: while a Lease says adopted = v,
//     its holder reconciles only keys it owns under ring v.
//  2. A member starts keys it gains under T only after the barrier: on
//     a list of the Leases read after its own adopted = version(T) was
//     written (and no write of it failed since), every live member of T,
//     itself included, shows adopted = version(T), and the list's live
//     members are exactly T. Members that left T are
//     dead by the liveness rule, so fenced. Keys it owns under both its
//     old ring and T go on without a pause.
//
// Why it is safe: suppose y passes the barrier of T and reconciles k
// (owned by y under T) while x reconciles k. If x is not in T, x is
// fenced. If x is in T, x showed adopted = version(T), so (invariant)
// x was not reconciling k then; to start k later, x needs a ring T2
// under which it owns k and, since x published T, either T2's barrier,
// which needs y to publish T2 first (y then drained k), or to have held
// k under every ring it published since its last barrier, T included,
// which it did not. A member that joins after the list (so y does not
// know it) sees y in its own first list and waits for y to adopt a
// ring that includes it. A write whose outcome is unknown (a timeout)
// counts as published for the held rings, and blocks every barrier until
// a later write succeeds: that write is guarded by resourceVersion, so
// the failed one has landed before it or never will.
//
// The cases: a member joining waits, owning nothing, until every other
// member has seen it, drained the keys it takes and adopted the new
// ring (about two retry periods). A member killed (-9) has its keys
// move once the others judge it dead: LeaseDuration plus up to two
// retry periods after its last renew. A member partitioned but alive
// fences at its renew deadline, before it is judged dead. Two changes
// in quick succession: each round retargets to the latest view, so an
// unfinished handover is replaced by the next; keys held since the
// last barrier go on, keys gained wait for the latest barrier.
//
// A process restarted with the identity it had (a StatefulSet pod's
// name, say) takes its old Lease over and, as the others never saw it
// leave, owns its old keys again: it passes no barrier until the margin
// (LeaseDuration - RenewDeadline) after it first saw that Lease, so a
// write the old process had on its way when it died lands first. This
// is safe only if the old process is really gone, which is why Identity
// must be unique per process, as for package leader.
//
// A reconcile that never returns holds its key's handover, and so the
// barrier of every ring after it, forever: reconciles must honour their
// context.
//
// # Two modes
//
//   - Filter (the default): every replica watches and caches every object of
//     the controller's resources and reconciles only its own keys.
//     Nothing to install, no writes to the objects, a key moves the
//     instant the barrier passes, and every replica already has the
//     cache to reconcile it. The cost: each replica lists, decodes and
//     keeps every object, so the API server's watch fan-out and each
//     replica's decode CPU and memory do not fall with N; only the
//     reconcile work does.
//   - Label (Config.Mode = Label; package controller does it): the owning
//     replica labels each primary object LabelKey(ring)=<identity> and
//     each replica watches the objects labelled with its identity plus the
//     unlabelled ones (two label-selected informers), so the API server's
//     fan-out and each replica's decode work for the primary resource fall
//     with N. Before the first reconcile of a key on a replica, its object
//     must be in that replica's labelled cache: the replica labels an
//     unlabelled object, reads a moved one live (it is labelled for the
//     old owner, so it is not cached here) and relabels it, guarded by the
//     resourceVersion read, and reconciles once the label's event arrives;
//     only an object the server does not show in the controller's scope is
//     reconciled uncached (it is gone, or it is an owner outside the scope
//     whose key came from Owns: that one is reconciled as in Filter mode
//     and never labelled; the server judges the scope, namespace, label
//     and field selectors alike). After each passed barrier the replica
//     lists the objects labelled for other members to find the ones it
//     gained (a dead member's included), since its cache cannot show them;
//     once per barrier, even one that brings back a ring seen before, and
//     again with backoff while that list fails. The costs: a write per
//     object that moves, a list of the others' objects per handover, a
//     delay of one watch event before a moved key's first reconcile, and
//     owned objects (Owns) still watched in full. Reconciles must read the
//     primary through the labelled cache (controller.Manager.ShardScope),
//     not an unscoped one. Labels decide only what is cached: which
//     replica may reconcile a key is still the gate's decision, so a stale
//     label can delay a reconcile but never let two replicas run one key.
//
// # Goroutines and metrics
//
// New starts nothing; Run starts one goroutine for the work function and
// returns only after it has returned. Metrics (Config.Metrics), labelled
// ring="<namespace>/<ring>": kwatch_shard_ring_members,
// kwatch_shard_ring_last_change_seconds, kwatch_shard_handovers_total,
// kwatch_shard_renew_failures_total; package controller adds
// kwatch_shard_keys_owned per controller.
package shard
