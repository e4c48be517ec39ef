package shard

import (
	"time"

	"github.com/kwatch/kwatch/leader"
)

// observed is what a member last saw of another member's Lease: the
// Lease's resourceVersion (any write changes it, each renew included),
// when that changed by the observer's own clock, and what it said.
type observed struct {
	rv       string
	seen     time.Time
	holder   string        // "" once released
	duration time.Duration // the holder's leaseDurationSeconds
	adopted  string        // the ring version the holder published
}

// dead reports whether the holder is gone at now: released, or its
// Lease unchanged for its own lease duration since the observer saw it
// change. The holder's renewTime is never compared with the local
// clock, so clock offsets do not matter, only clock rates.
func (o observed) dead(now time.Time) bool {
	return o.holder == "" || !now.Before(o.seen.Add(o.duration))
}

// view is a member's picture of the ring's Leases, by Lease name. A
// Lease that vanishes from a list keeps its last observation: it is
// judged by the same rule, so a deleted Lease of a member that may be
// alive still counts for a lease duration. Its zero value is empty; it
// is not safe for concurrent use (only the member's round touches it).
type view struct {
	leases map[string]observed
}

// observeAt folds one list of the ring's Leases, read at now, into v.
func (v *view) observeAt(items []*leader.Lease, now time.Time) {
	if v.leases == nil {
		v.leases = map[string]observed{}
	}
	for _, l := range items {
		old, ok := v.leases[l.Name]
		o := observedOf(l)
		o.seen = now
		if ok && old.rv == l.ResourceVersion {
			o.seen = old.seen
		}
		v.leases[l.Name] = o
	}
	for name, o := range v.leases { // forget what vanished and is dead anyway
		if o.dead(now) && !contains(items, name) {
			delete(v.leases, name)
		}
	}
}

// live is the set of identities alive at now, me included.
func (v *view) live(me string, now time.Time) []string {
	out := []string{me}
	for _, o := range v.leases {
		if !o.dead(now) && o.holder != me {
			out = append(out, o.holder)
		}
	}
	return out
}

// adopted is the published ring version of each live holder.
func (v *view) adopted(now time.Time) map[string]string {
	out := make(map[string]string, len(v.leases))
	for _, o := range v.leases {
		if !o.dead(now) {
			out[o.holder] = o.adopted
		}
	}
	return out
}

func observedOf(l *leader.Lease) observed {
	o := observed{rv: l.ResourceVersion, adopted: l.Annotations[AdoptedAnnotation]}
	if h := l.Spec.HolderIdentity; h != nil {
		o.holder = *h
	}
	if d := l.Spec.LeaseDurationSeconds; d != nil {
		o.duration = time.Duration(*d) * time.Second
	}
	return o
}

func contains(items []*leader.Lease, name string) bool {
	for _, l := range items {
		if l.Name == name {
			return true
		}
	}
	return false
}
