package leader

import "time"

// observation is what a candidate last saw of the Lease: its record, the
// resourceVersion it was read at (every write is guarded by it), and when
// the candidate saw the record change, by the candidate's own clock.
// Expiry is measured from seen, never from the record's renewTime, so
// the holder's clock offset does not matter, only clock rates do.
type observation struct {
	rec  record
	rv   string
	seen time.Time
	// exists is false when the last read found no Lease.
	exists bool
}

// observeAt folds a read of the Lease at now into o: seen moves to now
// only when the record differs from the one observed before.
func (o observation) observeAt(rec record, rv string, now time.Time) observation {
	if !o.exists || !o.rec.equal(rec) {
		o.seen = now
	}
	o.rec, o.rv, o.exists = rec, rv, true
	return o
}

// verdict is what one round decides.
type verdict int

const (
	// write: the candidate may write the proposed record (create, acquire
	// or renew), guarded by the observation's resourceVersion.
	write verdict = iota
	// held: another identity holds the Lease and it has not expired by
	// the candidate's clock; the round is lost without a write.
	held
)

// contender is who decides a round: its identity, its lease duration
// and margin (Timing), and whether it has written the Lease itself in
// this process.
type contender struct {
	identity         string
	duration, margin time.Duration
	wrote            bool
}

// decideAt is one round of the election, pure: given what was observed
// of the Lease, the candidate, and the time now, it says whether to
// write and what. It holds every rule of the protocol that client-go's
// leaderelection follows:
//   - a Lease held by another is taken only once its record has stayed
//     unchanged for its leaseDurationSeconds since the candidate saw it
//     change; an empty holder is free at once;
//   - the holder renewing keeps acquireTime and leaseTransitions;
//   - anyone else acquiring sets acquireTime to now and increments
//     leaseTransitions (a Lease created fresh starts at 0);
//
// and one client-go does not have: a Lease that names the candidate's
// identity but that it has not written in this process (a previous
// process with the same identity, restarted) is taken back only once
// its record has stayed unchanged for the margin (LeaseDuration -
// RenewDeadline) since the candidate saw it change. That process's term
// ended at the latest when it stopped, before this one started, and a
// write it had on its way lands within the margin of that; without the
// wait, the new process would lead at once, before such a write lands.
func decideAt(o observation, c contender, now time.Time) (record, verdict) {
	next := record{holder: c.identity, durationSec: int32(c.duration / time.Second), acquire: now, renew: now}
	if !o.exists {
		return next, write
	}
	old := o.rec
	if old.holder == c.identity {
		if !c.wrote && now.Before(o.seen.Add(c.margin)) {
			return record{}, held
		}
		next.acquire, next.transitions = old.acquire, old.transitions
		return next, write
	}
	if old.holder != "" && now.Before(o.expiry()) {
		return record{}, held
	}
	next.transitions = old.transitions + 1
	return next, write
}

// expiry is when the observed holder's claim ends by the observer's clock.
func (o observation) expiry() time.Time {
	return o.seen.Add(time.Duration(o.rec.durationSec) * time.Second)
}

// releasedAt is the record a leader writes to give the Lease up, as
// client-go writes it: no holder, a one-second duration, fresh times,
// leaseTransitions kept.
func releasedAt(old record, now time.Time) record {
	return record{durationSec: 1, acquire: now, renew: now, transitions: old.transitions}
}
