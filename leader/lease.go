package leader

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Lease is a coordination.k8s.io/v1 Lease with the fields leader election
// reads and writes, in the JSON the API server uses. Its zero value is an
// empty Lease; it is a plain value, not safe for concurrent mutation.
type Lease struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              LeaseSpec `json:"spec"`
}

// LeaseSpec is the spec of a Lease, field for field as in
// k8s.io/api/coordination/v1 (without the coordinated-election fields
// strategy and preferredHolder, which this package neither reads nor
// writes). Times are MicroTime: RFC 3339 with microseconds, in UTC.
type LeaseSpec struct {
	// HolderIdentity is the current leader; "" (or nil) means nobody holds
	// the Lease, as after a release.
	HolderIdentity *string `json:"holderIdentity,omitempty"`
	// LeaseDurationSeconds is how long candidates wait, from when they
	// saw the record change, before they may take the Lease.
	LeaseDurationSeconds *int32 `json:"leaseDurationSeconds,omitempty"`
	// AcquireTime is when the current holder acquired the Lease.
	AcquireTime *metav1.MicroTime `json:"acquireTime,omitempty"`
	// RenewTime is when the holder last renewed it, by the holder's clock.
	// Candidates never compare it with their own clock; a change of it is
	// what tells them the holder is alive.
	RenewTime *metav1.MicroTime `json:"renewTime,omitempty"`
	// LeaseTransitions counts changes of holder.
	LeaseTransitions *int32 `json:"leaseTransitions,omitempty"`
}

// record is the election record a LeaseSpec carries, with nil fields as
// zero values: what candidates compare to notice a change.
type record struct {
	holder      string
	durationSec int32
	acquire     time.Time
	renew       time.Time
	transitions int32
}

// recordOf reads the election record of s.
func recordOf(s LeaseSpec) record {
	var r record
	if s.HolderIdentity != nil {
		r.holder = *s.HolderIdentity
	}
	if s.LeaseDurationSeconds != nil {
		r.durationSec = *s.LeaseDurationSeconds
	}
	if s.AcquireTime != nil {
		r.acquire = s.AcquireTime.Time
	}
	if s.RenewTime != nil {
		r.renew = s.RenewTime.Time
	}
	if s.LeaseTransitions != nil {
		r.transitions = *s.LeaseTransitions
	}
	return r
}

// equal compares two records; times compare as instants.
func (r record) equal(o record) bool {
	return r.holder == o.holder && r.durationSec == o.durationSec && r.acquire.Equal(o.acquire) &&
		r.renew.Equal(o.renew) && r.transitions == o.transitions
}

// spec writes r as a LeaseSpec. Every field is set, holderIdentity ""
// included, as client-go writes its record.
func (r record) spec() LeaseSpec {
	acquire, renew := metav1.NewMicroTime(r.acquire), metav1.NewMicroTime(r.renew)
	return LeaseSpec{HolderIdentity: new(r.holder), LeaseDurationSeconds: new(r.durationSec),
		AcquireTime: &acquire, RenewTime: &renew, LeaseTransitions: new(r.transitions)}
}
