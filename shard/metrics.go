package shard

import (
	"time"

	"github.com/kwatch/kwatch/metrics"
)

// memberMetrics are the series a Member records, labelled with its ring
// ("namespace/ring"). Keys owned are counted by whoever knows the keys:
// package controller records kwatch_shard_keys_owned per controller.
type memberMetrics struct {
	handovers     metrics.Counter
	renewFailures metrics.Counter
}

func newMetrics(p metrics.Provider, ring string, m *Member) memberMetrics {
	p, _ = metrics.OrNoop(p)
	l := metrics.Label{Name: "ring", Value: ring}
	p.GaugeFunc("kwatch_shard_ring_members",
		"Members this replica sees live on the ring.", func() float64 {
			return float64(len(m.Ring().Members()))
		}, l)
	p.GaugeFunc("kwatch_shard_ring_last_change_seconds",
		"Seconds since this replica's view of the ring's members last changed (0 before the first view).", func() float64 {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.changedAt.IsZero() {
				return 0
			}
			return time.Since(m.changedAt).Seconds()
		}, l)
	return memberMetrics{
		handovers: p.Counter("kwatch_shard_handovers_total",
			"Handover barriers this replica passed: each time it started reconciling the keys of a new ring.", l),
		renewFailures: p.Counter("kwatch_shard_renew_failures_total",
			"Rounds of this replica that failed to list the ring or renew its lease.", l),
	}
}
