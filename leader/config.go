package leader

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
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

	// Timing are the Lease's durations (LeaseDuration, RenewDeadline,
	// RetryPeriod); the zero Timing is the defaults.
	Timing

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
	var err error
	if c.Timing, err = c.Timing.WithDefaults(); err != nil {
		return c, fmt.Errorf("leader: Config.%w", err)
	}
	if c.ReleaseOnCancel == nil {
		c.ReleaseOnCancel = new(true)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}
