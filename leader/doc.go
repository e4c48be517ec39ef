// Package leader elects one leader among the replicas of a controller on a
// coordination.k8s.io/v1 Lease, compatible with client-go's
// leaderelection (resourcelock.LeaseLock) on the same Lease: the same
// fields (holderIdentity, leaseDurationSeconds, acquireTime, renewTime,
// leaseTransitions), the same meaning, the same 15 s / 10 s / 2 s
// defaults. A kwatch candidate and a client-go candidate can compete for
// one Lease.
//
//	e, err := leader.New(leader.Config{Client: c, Namespace: "kube-system", Name: "my-controller",
//		Identity: hostname + "_" + uuid})
//	err = e.Run(ctx, func(ctx context.Context) { runControllers(ctx) })
//
// # The protocol
//
//   - A candidate reads the Lease every RetryPeriod. It takes a Lease held
//     by another only when the Lease's record (holder, times, duration,
//     transitions) has not changed for leaseDurationSeconds since the
//     candidate saw it change, by the candidate's own clock. The holder's
//     renewTime is never compared with the candidate's clock; its change is
//     the holder's heartbeat. A Lease with no holder (released) is free at
//     once.
//   - Every write is guarded by the resourceVersion read (a create when
//     there is no Lease): a conflict means someone wrote in between, and
//     the round is lost; nothing is overwritten.
//   - Acquiring sets acquireTime and increments leaseTransitions; renewing
//     moves renewTime only. Releasing (on cancel, unless ReleaseOnCancel is
//     false) writes holderIdentity "" with leaseDurationSeconds 1 and fresh
//     times, as client-go does, guarded by the last write's resourceVersion.
//   - States: Candidate, Leading, then Lost (renew deadline passed, or
//     another holder seen: Run returns ErrLost) or Released (Run's context
//     ended or the leading function returned). round.go holds one round,
//     decide.go its pure decision; elector.go what happens on a lost lease.
//
// # The safety property
//
// A leader whose renews fail stops leading at its renew deadline: its
// Term (term.go) ends RenewDeadline after the start of the last round
// that renewed the Lease, and the context given to the leading function
// is cancelled then. Each round's requests are bounded by that deadline,
// so a renew that hangs does not extend it, and one that comes back late
// does not revive it. Another candidate cannot acquire before
// LeaseDuration after it saw that renew, which it can only see after the
// round started. So the old leader's context is cancelled at least
// LeaseDuration - RenewDeadline (5 s by default) before any other
// candidate can lead, provided that:
//
//   - clocks run at close to the same rate: only elapsed times on each
//     machine's own monotonic clock are used, so the offset between
//     clocks does not matter, only their rates. If the leader's clock
//     runs slow by a factor r relative to a candidate's, the margin is
//     LeaseDuration - r*RenewDeadline; the election is safe for any r
//     below LeaseDuration/RenewDeadline (1.5 by default). A machine or
//     VM suspended while leading breaks this: its monotonic clock stops
//     while the others' runs;
//   - the leading function stops acting within that margin once its
//     context is cancelled (Run waits for it to return; on a cancel of
//     Run's own context the Lease is renewed until it has, and only then
//     released, so a clean shutdown never shortens the margin);
//   - Identity is unique per process. Candidates wait for the
//     leaseDurationSeconds the leader wrote, not for their own setting
//     (client-go's do the same), so the margin is the leader's own
//     LeaseDuration - RenewDeadline, whatever the others are configured
//     with. A process restarted with its predecessor's identity takes a
//     Lease naming it back only once the record has stayed unchanged
//     for that margin (client-go's takes it at once), so a write the
//     predecessor had on its way when it died lands first.
//
// The end of a term does not depend on the elector's goroutine: Term's
// Until compares the deadline with the clock at each call, and a timer
// (run by the Go runtime, not by Run's loop) cancels its context at the
// deadline. An elector goroutine that is starved or blocked (a stuck log
// handler, say) still stops the leader on time; a whole process that is
// stopped (SIGSTOP) acts on nothing while stopped, and on waking its
// first Until already says no.
//
// Package controller relies on the term for a fence neither client-go
// nor controller-runtime has: at the deadline the manager cancels every
// reconcile at once and refuses, before sending, every write through its
// client (kube.IsFenced), so a reconcile that ignores its context still
// cannot write. A write already on the wire when the term ends cannot be
// recalled: it is covered by the margin LeaseDuration - RenewDeadline
// as long as it reaches the server within that time (its context is
// cancelled at the deadline, so it does not wait in the client, and it
// left before the deadline). The same margin covers a release: each
// write is a hold of the term (Term.Hold), and one that was cut off or
// came back without a known outcome (no answer; a 500, 502, 503 or 504:
// kube.OutcomeUnknown) may still land, so Run waits Timing.Margin after the last such cut before it
// releases the Lease, instead of giving that write only the next
// candidate's retry period. Code that needs more puts the Lease's
// resourceVersion or holder in its own writes.
//
// Deleting a held Lease voids the guarantee, as with client-go: a
// candidate creates a missing Lease at once, and the leader notices only
// at its next renew (then it stops leading).
//
// Run starts one goroutine for the leading function and returns only after
// it has returned; New starts nothing. Metrics (Config.Metrics):
// kwatch_leader_is_leader, kwatch_leader_transitions_total and
// kwatch_leader_renew_failures_total, labelled with the Lease.
package leader
