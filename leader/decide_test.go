package leader

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDecideAt(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) // a holder's clock far behind: never compared
	heldBy := func(h string, tr int32) observation {
		return observation{rec: record{holder: h, durationSec: 15, acquire: old, renew: old, transitions: tr},
			rv: "7", seen: t0, exists: true}
	}
	const ld = 15 * time.Second
	tests := []struct {
		name string
		obs  observation
		now  time.Time
		want record
		v    verdict
	}{
		{"no lease: create, transitions 0", observation{}, t0,
			record{holder: "me", durationSec: 15, acquire: t0, renew: t0}, write},
		{"held, seen changing just now: wait", heldBy("other", 2), t0, record{}, held},
		{"held, a nanosecond before expiry by my clock: wait", heldBy("other", 2), t0.Add(ld - 1), record{}, held},
		{"held, unchanged for the lease duration: acquire, transitions+1", heldBy("other", 2), t0.Add(ld),
			record{holder: "me", durationSec: 15, acquire: t0.Add(ld), renew: t0.Add(ld), transitions: 3}, write},
		{"the record's duration counts, not mine: 30 s written, 20 s waited", func() observation {
			o := heldBy("other", 2)
			o.rec.durationSec = 30
			return o
		}(), t0.Add(20 * time.Second), record{}, held},
		{"released (no holder): acquire at once", heldBy("", 2), t0,
			record{holder: "me", durationSec: 15, acquire: t0, renew: t0, transitions: 3}, write},
		{"mine: renew keeps acquireTime and transitions", heldBy("me", 2), t0.Add(time.Second),
			record{holder: "me", durationSec: 15, acquire: old, renew: t0.Add(time.Second), transitions: 2}, write},
		{"my identity, not written by me (a restart): wait the margin", heldBy("me", 2), t0.Add(5*time.Second - 1),
			record{}, held},
		{"my identity, not written by me, unchanged for the margin: take it back", heldBy("me", 2), t0.Add(5 * time.Second),
			record{holder: "me", durationSec: 15, acquire: old, renew: t0.Add(5 * time.Second), transitions: 2}, write},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wrote := tt.name == "mine: renew keeps acquireTime and transitions"
			got, v := decideAt(tt.obs, contender{identity: "me", duration: ld, margin: 5 * time.Second, wrote: wrote}, tt.now)
			require.Equal(t, tt.v, v)
			require.True(t, tt.want.equal(got), "got %+v, want %+v", got, tt.want)
		})
	}
}

// TestObserveAt: the observed time moves only when the record changes,
// whatever the resourceVersion; expiry counts from it with the record's
// own duration.
func TestObserveAt(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	rec := record{holder: "a", durationSec: 4, renew: t0}
	o := observation{}.observeAt(rec, "1", t0)
	require.Equal(t, t0, o.seen)
	o = o.observeAt(rec, "2", t0.Add(time.Second))
	require.Equal(t, t0, o.seen, "same record: still seen at t0")
	require.Equal(t, "2", o.rv)
	rec.renew = t0.Add(time.Second)
	o = o.observeAt(rec, "3", t0.Add(2*time.Second))
	require.Equal(t, t0.Add(2*time.Second), o.seen, "renewTime changed")
	require.Equal(t, t0.Add(6*time.Second), o.expiry())
}

func TestConfigErrors(t *testing.T) {
	c := newTestClient(t)
	base := Config{Client: c, Name: "l", Identity: "me"}
	tests := []struct {
		name   string
		adjust func(*Config)
		want   string
	}{
		{"no client", func(c *Config) { c.Client = nil }, "Config.Client is required"},
		{"no name", func(c *Config) { c.Name = "" }, "Config.Name"},
		{"no identity", func(c *Config) { c.Identity = "" }, "Config.Identity is required"},
		{"renew deadline = lease duration", func(c *Config) { c.RenewDeadline = 15 * time.Second },
			"RenewDeadline 15s must be less than LeaseDuration 15s"},
		{"retry period = renew deadline", func(c *Config) { c.RetryPeriod = 10 * time.Second },
			"RetryPeriod 10s must be less than RenewDeadline 10s"},
		{"fractional lease duration", func(c *Config) {
			c.LeaseDuration = 1500 * time.Millisecond
			c.RenewDeadline = time.Second
			c.RetryPeriod = 100 * time.Millisecond
		},
			"LeaseDuration 1.5s must be a whole number of seconds"},
		{"negative retry", func(c *Config) { c.RetryPeriod = -1 }, "must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base
			tt.adjust(&cfg)
			_, err := New(cfg)
			require.ErrorContains(t, err, tt.want)
		})
	}
	e, err := New(base)
	require.NoError(t, err)
	require.Equal(t, DefaultLeaseDuration, e.cfg.LeaseDuration)
	require.Equal(t, DefaultRenewDeadline, e.cfg.RenewDeadline)
	require.Equal(t, DefaultRetryPeriod, e.cfg.RetryPeriod)
	require.Equal(t, "default", e.cfg.Namespace)
	require.True(t, *e.cfg.ReleaseOnCancel)
	require.Equal(t, Idle, e.State())
}
