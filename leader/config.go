package leader

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
)

// The defaults client-go's leader election is usually run with.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// Config configures an Elector. Client, Name and Identity are required;
// every other field has the default its comment names.
type Config struct {
	// Client is the connection the Lease is read and written on. Required.
	// Renews wait for its token bucket like every other request: a client
	// of its own keeps them from queueing behind a busy controller's
	// requests, as the renew deadline does not wait.
	Client *kube.Client
	// Namespace of the Lease; "" means "default".
	Namespace string
	// Name of the Lease, shared by every candidate of one election. Required.
	Name string
	// Identity names this candidate in holderIdentity. It must be unique
	// per process (a hostname plus a random suffix, say): two processes
	// with one identity both believe they hold the Lease. Required.
	Identity string

	// LeaseDuration is how long candidates wait, from when they saw the
	// Lease's record change, before taking it from its holder. It is
	// written to leaseDurationSeconds, so it must be a whole number of
	// seconds. Zero means DefaultLeaseDuration (15 s).
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps leading without a
	// successful renew, measured from the start of its last successful
	// one; then it stops. It must be less than LeaseDuration: the
	// difference is the margin of the safety property (doc.go). Zero
	// means DefaultRenewDeadline (10 s).
	RenewDeadline time.Duration
	// RetryPeriod is the pause between rounds: a candidate's attempts to
	// acquire and the leader's renews. It must be less than
	// RenewDeadline. Zero means DefaultRetryPeriod (2 s).
	RetryPeriod time.Duration

	// ReleaseOnCancel says whether Run, when its context ends (or the
	// leading function returns) while leading, gives the Lease up once
	// the leading function has returned, so another candidate takes over
	// within one retry period instead of a lease duration. Nil means
	// true; new(false) keeps the Lease until it expires.
	ReleaseOnCancel *bool

	// Logger receives transitions and failed rounds; nil means
	// slog.Default().
	Logger *slog.Logger
	// Metrics receives kwatch_leader_is_leader,
	// kwatch_leader_transitions_total and
	// kwatch_leader_renew_failures_total, labelled with the Lease
	// ("namespace/name"); nil records nothing.
	Metrics metrics.Provider
}

// withDefaults validates c and fills in its defaults. Every error names
// the field and the relation it breaks.
func (c Config) withDefaults() (Config, error) {
	if c.Client == nil {
		return c, errors.New("leader: Config.Client is required")
	}
	if c.Name == "" {
		return c, errors.New("leader: Config.Name (the Lease's name) is required")
	}
	if c.Identity == "" {
		return c, errors.New("leader: Config.Identity is required: a name unique to this process")
	}
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = DefaultRenewDeadline
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = DefaultRetryPeriod
	}
	switch {
	case c.LeaseDuration < time.Second || c.LeaseDuration%time.Second != 0:
		return c, fmt.Errorf("leader: Config.LeaseDuration %v must be a whole number of seconds, at least 1s (it is written to leaseDurationSeconds)", c.LeaseDuration)
	case c.RenewDeadline <= 0 || c.RetryPeriod <= 0:
		return c, fmt.Errorf("leader: Config.RenewDeadline %v and RetryPeriod %v must be positive", c.RenewDeadline, c.RetryPeriod)
	case c.RenewDeadline >= c.LeaseDuration:
		return c, fmt.Errorf("leader: Config.RenewDeadline %v must be less than LeaseDuration %v", c.RenewDeadline, c.LeaseDuration)
	case c.RetryPeriod >= c.RenewDeadline:
		return c, fmt.Errorf("leader: Config.RetryPeriod %v must be less than RenewDeadline %v", c.RetryPeriod, c.RenewDeadline)
	}
	if c.ReleaseOnCancel == nil {
		c.ReleaseOnCancel = new(true)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}
