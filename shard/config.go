package shard

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
	"github.com/kwatch/kwatch/metrics"
)

// The label that marks a member's Lease with its ring, and the
// annotation in which the member publishes the ring version it adopted.
const (
	RingLabel         = "shard.kwatch.dev/ring"
	AdoptedAnnotation = "shard.kwatch.dev/adopted"
)

// Config configures a Member. Client, Ring and Identity are required;
// every other field has the default its comment names. Every replica of
// one ring must use the same Namespace, Ring and VirtualNodes.
type Config struct {
	// Client is the connection the Leases are read and written on.
	// Required (in package controller, the manager's by default). As for
	// leader election, a client of its own keeps renews from queueing
	// behind a busy controller's requests.
	Client *kube.Client
	// Namespace of the Leases; "" means "default".
	Namespace string
	// Ring names the set of replicas sharing keys: the value of the
	// RingLabel of their Leases and the prefix of each Lease's name.
	// It must be a valid label value. Required.
	Ring string
	// Identity names this replica in its Lease's holderIdentity and on
	// the ring. It must be unique per process (a hostname plus a random
	// suffix): two processes with one identity would both reconcile the
	// same keys. Required.
	Identity string

	// Timing are the durations of this member's Lease, as an election's
	// (leader.Timing): the others take its keys LeaseDuration after they
	// saw its Lease change; past RenewDeadline without a successful renew
	// it fences itself (it stops starting reconciles, cancels the ones in
	// flight and Run returns ErrFenced); it lists the ring's Leases and
	// renews its own every RetryPeriod. The zero Timing is the defaults.
	leader.Timing
	// VirtualNodes is the number of ring points per member; zero means
	// DefaultVirtualNodes.
	VirtualNodes int
	// Mode is read by package controller: Filter (the zero value) or
	// Label. In Label mode Identity must be a valid label value.
	Mode Mode

	// Logger receives membership changes and failed rounds; nil means
	// slog.Default().
	Logger *slog.Logger
	// Metrics receives the kwatch_shard_* series, labelled with the
	// ring; nil records nothing. Package controller defaults it to the
	// manager's and records kwatch_shard_keys_owned (per controller) in
	// the manager's, or here when the manager has none.
	Metrics metrics.Provider
}

// LeaseName is the name of the Lease of identity on ring:
// "<ring>-<hash of identity>", a valid object name whatever the identity.
func LeaseName(ring, identity string) string {
	h := fnv.New64a()
	h.Write([]byte(identity))
	return ring + "-" + strconv.FormatUint(h.Sum64(), 36)
}

// withDefaults validates c and fills in its defaults. Every error names
// the field and the relation it breaks.
func (c Config) withDefaults() (Config, error) {
	switch {
	case c.Client == nil:
		return c, errors.New("shard: Config.Client is required")
	case c.Ring == "":
		return c, errors.New("shard: Config.Ring is required")
	case c.Identity == "":
		return c, errors.New("shard: Config.Identity is required: a name unique to this process")
	case len(c.Ring) > 49:
		return c, fmt.Errorf("shard: Config.Ring %q is longer than 49 characters (it prefixes Lease names and is a label value)", c.Ring)
	}
	if c.Mode == Label && !validLabelValue(c.Identity) {
		return c, fmt.Errorf("shard: Config.Identity %q must be a label value in Label mode (at most 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit)", c.Identity)
	}
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	if c.VirtualNodes <= 0 {
		c.VirtualNodes = DefaultVirtualNodes
	}
	var err error
	if c.Timing, err = c.Timing.WithDefaults(); err != nil {
		return c, fmt.Errorf("shard: Config.%w", err)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

func validLabelValue(v string) bool {
	if v == "" || len(v) > 63 {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return alnum(v[0]) && alnum(v[len(v)-1])
}
