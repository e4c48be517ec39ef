package shard

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/metrics/metricstest"
)

// TestMetrics: members seen, handovers passed and the age of the ring
// view, labelled with the ring.
func TestMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		reg := metrics.NewSet()
		a := c.run("a", func(cfg *Config) { cfg.Metrics = reg })
		time.Sleep(3 * time.Second)
		synctest.Wait()
		m := metricstest.Scrape(t, reg)
		require.Equal(t, 1.0, m[`kwatch_shard_ring_members{ring="demo/r"}`])
		require.Equal(t, 1.0, m[`kwatch_shard_handovers_total{ring="demo/r"}`])
		require.InDelta(t, 3.0, m[`kwatch_shard_ring_last_change_seconds{ring="demo/r"}`], 0.5)

		b := c.run("b", nil)
		waitSettled(t, func() []*testMember { return []*testMember{a, b} }, 2)
		m = metricstest.Scrape(t, reg)
		require.Equal(t, 2.0, m[`kwatch_shard_ring_members{ring="demo/r"}`])
		require.Equal(t, 2.0, m[`kwatch_shard_handovers_total{ring="demo/r"}`])
		require.Less(t, m[`kwatch_shard_ring_last_change_seconds{ring="demo/r"}`], 3.0)
	})
}
