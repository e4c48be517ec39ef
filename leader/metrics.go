package leader

import "github.com/kwatch/kwatch/metrics"

// electorMetrics are the series an Elector records, labelled with its Lease.
type electorMetrics struct {
	isLeader      metrics.Gauge
	transitions   metrics.Counter
	renewFailures metrics.Counter
}

func newMetrics(p metrics.Provider, lease string) electorMetrics {
	p, _ = metrics.OrNoop(p)
	l := metrics.Label{Name: "lease", Value: lease}
	return electorMetrics{
		isLeader: p.Gauge("kwatch_leader_is_leader",
			"1 while this process holds the lease, 0 otherwise.", l),
		transitions: p.Counter("kwatch_leader_transitions_total",
			"Changes of the lease's holder to another identity seen between two of this process's reads or writes (its own acquisitions included; a release to nobody is none).", l),
		renewFailures: p.Counter("kwatch_leader_renew_failures_total",
			"Renew rounds of the leader that failed (each, until the renew deadline ends leadership).", l),
	}
}
