package controller_test

import (
	"fmt"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/shardreplica"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/shard"
)

// TestShardFigures measures, for N = 1, 2 and 3 replica processes
// sharding 1,000 ConfigMaps in filter mode, the reconciles per second and
// the CPU time of each replica under a fixed churn of writes. It runs
// only with KWATCH_SHARD_FIGURES=1 (it takes about a minute and its
// numbers depend on the machine); run it without -race.
func TestShardFigures(t *testing.T) {
	if os.Getenv("KWATCH_SHARD_FIGURES") != "1" {
		t.Skip("set KWATCH_SHARD_FIGURES=1 to measure")
	}
	const window = 10 * time.Second
	for _, decodeOnly := range []bool{false, true} {
		for _, mode := range []shard.Mode{shard.Filter, shard.Label} {
			for _, n := range []int{1, 2, 3} {
				shardFigures(t, mode, n, window, decodeOnly)
			}
		}
	}
}

// shardFigures measures one mode and N; decodeOnly has the replicas decode
// whole objects and reconcile without a request (see
// shardreplica.Options.DecodeOnly).
func shardFigures(t *testing.T, mode shard.Mode, n int, window time.Duration, decodeOnly bool) {
	{
		srv := kwatchtest.Start(t, kwatchtest.Options{})
		keys := seedConfigMaps(t, srv, 1000, "cm-%04d", func(i int) string { return fmt.Sprintf(`,"data":{"v":"%04096d"}`, i) })
		tl := shardreplica.NewTimeline()
		var ids []string
		procs := map[string]*shardreplica.Proc{}
		for i := range n {
			id := fmt.Sprintf("%s-n%d-%d", mode, n, i)
			p, err := shardreplica.StartProc(shardreplica.Options{Config: srv.Config(), NS: "demo", Ring: "figures",
				ID: id, Timing: processTiming, Mode: mode, DecodeOnly: decodeOnly}, tl, func(line string) { t.Errorf("replica %s", line) })
			require.NoError(t, err)
			t.Cleanup(p.Kill)
			ids = append(ids, id)
			procs[id] = p
		}
		waitProcRing(t, tl, ids)
		touchAndCheck(t, srv, tl, keys, ids)
		before := map[string]time.Duration{}
		for id, p := range procs {
			before[id] = p.CPU()
		}
		from := time.Now()
		stop := churnEvery(t, srv, keys, time.Millisecond) // up to 1,000 writes per second
		time.Sleep(window)
		stop()
		to := time.Now()
		total := 0
		for _, id := range ids {
			total += tl.StartsBetween(id, from, to)
		}
		t.Logf("decode-only=%v %s N=%d: %.0f reconciles/s in all", decodeOnly, mode, n, float64(total)/window.Seconds())
		for _, id := range slices.Sorted(slices.Values(ids)) {
			cpu := procs[id].CPU() - before[id]
			rec := tl.StartsBetween(id, from, to)
			t.Logf("decode-only=%v %s N=%d %s: %.0f reconciles/s, CPU %.2f s per s of churn (%.0f%% of a core)",
				decodeOnly, mode, n, id, float64(rec)/window.Seconds(), cpu.Seconds()/window.Seconds(), 100*cpu.Seconds()/window.Seconds())
		}
		for _, p := range procs {
			p.Signal(syscall.SIGTERM)
		}
		require.Empty(t, tl.Overlaps())
	}
}
