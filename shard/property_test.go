package shard

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRandomMembershipNeverOverlaps drives rings through random joins,
// clean stops and partitions (a member cut off, left to fence) at random
// moments, several changes often in flight at once, and checks every
// 50 ms of fake time that no key is owned by two members; after the last
// change the survivors settle and own every key exactly once.
func TestRandomMembershipNeverOverlaps(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { randomMembership(t, seed) })
		})
	}
}

func randomMembership(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	c := newCluster(t)
	keys := testKeys(200)
	var mu sync.Mutex
	var live []*testMember
	members := func() []*testMember { mu.Lock(); defer mu.Unlock(); return append([]*testMember(nil), live...) }
	w, stopWatch := c.watchOverlap(members, keys, 50*time.Millisecond)
	next := 0
	join := func() {
		tm := c.run(fmt.Sprintf("m%d", next), nil)
		next++
		mu.Lock()
		live = append(live, tm)
		mu.Unlock()
	}
	for range 2 {
		join()
	}
	for range 12 {
		time.Sleep(time.Duration(rng.IntN(6000)) * time.Millisecond)
		ms := members()
		switch op := rng.IntN(3); {
		case op == 0 || len(ms) < 2:
			join()
		case op == 1:
			i := rng.IntN(len(ms))
			go func() { _ = ms[i].stop() }() // clean: drain, then release
			mu.Lock()
			live = append(live[:i:i], live[i+1:]...)
			mu.Unlock()
		default:
			i := rng.IntN(len(ms))
			ms[i].link.Partition(false) // keeps owning until it fences; stays in the watch
			go func() {
				time.Sleep(time.Minute)
				_ = ms[i].stop()
				mu.Lock()
				for j, x := range live {
					if x == ms[i] {
						live = append(live[:j:j], live[j+1:]...)
						break
					}
				}
				mu.Unlock()
			}()
		}
	}
	time.Sleep(2 * time.Minute) // every partitioned member is out
	ms := members()
	if len(ms) == 0 {
		join()
		ms = members()
	}
	waitSettled(t, members, len(ms))
	checkOwnedOnce(t, members(), keys)
	stopWatch()
	require.Empty(t, w.overlaps)
}
