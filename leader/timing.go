package leader

import (
	"fmt"
	"time"
)

// The defaults client-go's leader election is usually run with.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// Timing are the durations of holding a Lease: an election's (Config) and
// a shard ring member's (shard.Config), which renew their Leases the same
// way and so need the same relations between them (doc.go says why).
// The zero value is the defaults; a Timing is a plain value.
type Timing struct {
	// LeaseDuration is how long the others wait, from when they saw a
	// Lease's record change, before they take it from its holder (or, on
	// a shard ring, judge the member dead and take its keys). It is
	// written to leaseDurationSeconds, so it must be a whole number of
	// seconds. Zero means DefaultLeaseDuration (15 s).
	LeaseDuration time.Duration
	// RenewDeadline is how long the holder goes on without a successful
	// renew, measured from the start of its last successful one; then it
	// stops (a leader stops leading, a shard member fences itself). It
	// must be less than LeaseDuration: the difference is the margin of
	// the safety property. Zero means DefaultRenewDeadline (10 s).
	RenewDeadline time.Duration
	// RetryPeriod is the pause between rounds: a candidate's attempts to
	// acquire and the holder's renews. It must be less than
	// RenewDeadline. Zero means DefaultRetryPeriod (2 s).
	RetryPeriod time.Duration
}

// Margin is LeaseDuration - RenewDeadline: how long, at least, after a
// holder's term ends before anyone else can act on its Lease (doc.go).
// A holder that gives the Lease up on purpose waits it after the last
// cut of its term (Term.LastCut) first.
func (t Timing) Margin() time.Duration { return t.LeaseDuration - t.RenewDeadline }

// WithDefaults fills t's zero durations with the defaults and checks the
// relations between them. The error names the field and the relation it
// breaks.
func (t Timing) WithDefaults() (Timing, error) {
	if t.LeaseDuration == 0 {
		t.LeaseDuration = DefaultLeaseDuration
	}
	if t.RenewDeadline == 0 {
		t.RenewDeadline = DefaultRenewDeadline
	}
	if t.RetryPeriod == 0 {
		t.RetryPeriod = DefaultRetryPeriod
	}
	switch {
	case t.LeaseDuration < time.Second || t.LeaseDuration%time.Second != 0:
		return t, fmt.Errorf("LeaseDuration %v must be a whole number of seconds, at least 1s (it is written to leaseDurationSeconds)", t.LeaseDuration)
	case t.RenewDeadline <= 0 || t.RetryPeriod <= 0:
		return t, fmt.Errorf("RenewDeadline %v and RetryPeriod %v must be positive", t.RenewDeadline, t.RetryPeriod)
	case t.RenewDeadline >= t.LeaseDuration:
		return t, fmt.Errorf("RenewDeadline %v must be less than LeaseDuration %v", t.RenewDeadline, t.LeaseDuration)
	case t.RetryPeriod >= t.RenewDeadline:
		return t, fmt.Errorf("RetryPeriod %v must be less than RenewDeadline %v", t.RetryPeriod, t.RenewDeadline)
	}
	return t, nil
}
