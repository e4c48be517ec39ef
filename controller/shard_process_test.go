package controller_test

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/shardreplica"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/shard"
)

// The multi-process test starts this binary again as sharded replicas.
func init() { shardreplica.MaybeRun() }

// processTiming is the ring of the multi-process test: short, with room
// for replicas built with -race on a loaded machine.
var processTiming = shardreplica.Timing{Lease: 5 * time.Second, Renew: 4 * time.Second, Retry: 300 * time.Millisecond}

// TestShardedProcesses: three replica processes split 1,000 ConfigMaps;
// a fourth process joins and takes about a quarter of the keys; one is
// killed with SIGKILL and its keys are reconciled by the others once its
// Lease expires. ConfigMaps change all along; the replicas' printed
// timelines show no key reconciled by two processes at overlapping
// times, and at the end every key reconciled by its ring owner.
func TestShardedProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	keys := seedConfigMaps(t, srv, 1000, "cm-%04d", nil)
	tl := shardreplica.NewTimeline()
	procs := map[string]*shardreplica.Proc{}
	startProc := func(id string) {
		p, err := shardreplica.StartProc(shardreplica.Options{Config: srv.Config(), NS: "demo", Ring: "procs",
			ID: id, Timing: processTiming}, tl, func(line string) { t.Errorf("replica %s", line) })
		require.NoError(t, err)
		procs[id] = p
		t.Cleanup(p.Kill)
	}
	ids := []string{"proc-0", "proc-1", "proc-2"}
	for _, id := range ids {
		startProc(id)
	}
	waitProcRing(t, tl, ids)
	touchAndCheck(t, srv, tl, keys, ids)
	stopChurn := churn(t, srv, keys)
	defer stopChurn()

	joined := time.Now()
	startProc("proc-3")
	ids = append(ids, "proc-3")
	waitProcRing(t, tl, ids)
	t.Logf("4th process: its ring settled %v after it was started (process start and cache sync included)", time.Since(joined).Round(time.Millisecond))
	stopChurn()
	counts := touchAndCheck(t, srv, tl, keys, ids)
	require.InDelta(t, 250, counts["proc-3"], 100, "keys of the 4th replica: %v", counts)
	stopChurn = churn(t, srv, keys)

	killed := procs["proc-1"].Signal(syscall.SIGKILL)
	var theirs []string
	for _, k := range keys {
		if tl.LastBefore(k, killed) == "proc-1" {
			theirs = append(theirs, k)
		}
	}
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == "proc-1" })
	var failover time.Duration
	require.True(t, poll(func() bool {
		failover = 0
		for _, k := range theirs {
			s, ok := tl.FirstAfter(k, killed, "proc-1")
			if !ok {
				return false
			}
			failover = max(failover, s.At.Sub(killed))
		}
		return true
	}), "every key of the killed replica reconciled by another")
	t.Logf("kill -9: the %d keys of the killed replica were all reconciled elsewhere within %v (lease %v)",
		len(theirs), failover.Round(time.Millisecond), processTiming.Lease)
	waitProcRing(t, tl, ids)
	stopChurn()
	touchAndCheck(t, srv, tl, keys, ids)
	for _, id := range ids {
		procs[id].Signal(syscall.SIGTERM)
	}
	require.Empty(t, tl.Overlaps())
	t.Logf("%d reconciles across the processes, 0 overlaps", tl.Total())
}

// poll checks cond every 20 ms for up to a minute.
func poll(cond func() bool) bool {
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// waitProcRing waits until every replica of ids prints the ring of ids,
// settled.
func waitProcRing(t *testing.T, tl *shardreplica.Timeline, ids []string) {
	t.Helper()
	want := slices.Sorted(slices.Values(ids))
	ok := poll(func() bool {
		for _, id := range ids {
			v := tl.Ring(id)
			if !v.Settled || !slices.Equal(v.Members, want) {
				return false
			}
		}
		return true
	})
	if !ok {
		for _, id := range ids {
			t.Logf("%s: %+v", id, tl.Ring(id))
		}
		t.Fatalf("the ring of %v did not settle", ids)
	}
}

// touchAndCheck changes every object and waits until each has been
// reconciled since, by its owner on the ring of ids. It returns the keys
// each replica reconciled.
func touchAndCheck(t *testing.T, srv *kwatchtest.Server, tl *shardreplica.Timeline, keys, ids []string) map[string]int {
	t.Helper()
	ring := shard.NewRing(ids, 0)
	touched := time.Now()
	for i, k := range keys {
		ns, name, _ := cut(k)
		_, err := srv.Patch("configmaps", ns, name, fmt.Sprintf(`{"data":{"touched":"%d-%d"}}`, touched.UnixNano(), i))
		require.NoError(t, err)
	}
	counts := map[string]int{}
	ok := poll(func() bool {
		clear(counts)
		for _, k := range keys {
			s, ok := tl.FirstAfter(k, touched, "")
			if !ok {
				return false
			}
			counts[s.Replica]++
		}
		return true
	})
	require.True(t, ok, "every key reconciled after the touch")
	for _, k := range keys {
		require.Equal(t, ring.Owner(k), tl.LastBefore(k, time.Now()), "key %s reconciled last by its owner", k)
	}
	return counts
}

func cut(k string) (string, string, bool) {
	for i := range k {
		if k[i] == '/' {
			return k[:i], k[i+1:], true
		}
	}
	return "", k, false
}
