package sim

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestListAtRVMatchesReplay is a randomized property test of the snapshot lists:
// for random histories, every page of a list at any retained resourceVersion, with
// any prefix and limit, equals the state replayed from the beginning.
func TestListAtRVMatchesReplay(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { checkReplay(t, seed) })
	}
}

func checkReplay(t *testing.T, seed uint64) {
	srv, err := New(Options{HistorySize: 64, Seed: seed + 1})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(seed, 99))
	states := map[uint64]map[string]uint64{} // rv -> key -> object rv
	cur := map[string]uint64{}
	for range 150 {
		ns := fmt.Sprintf("ns%d", rng.IntN(3))
		name := fmt.Sprintf("p%02d", rng.IntN(12))
		key := ns + "/" + name
		if _, ok := cur[key]; ok && rng.IntN(3) == 0 {
			_, err := srv.Delete("pods", ns, name)
			require.NoError(t, err)
			delete(cur, key)
		} else {
			rv, err := srv.PutPod(Pod{Namespace: ns, Name: name, Restarts: int32(rng.IntN(5))})
			require.NoError(t, err)
			cur[key] = rv
		}
		snap := make(map[string]uint64, len(cur))
		for k, v := range cur {
			snap[k] = v
		}
		states[srv.ResourceVersion()] = snap
	}
	st := srv.store
	r := st.resources["pods"]
	for rv, want := range states {
		st.mu.Lock()
		retained := rv >= st.floorLocked()
		st.mu.Unlock()
		if !retained {
			continue
		}
		for _, prefix := range []string{"", "ns0/", "ns2/"} {
			limit := 1 + rng.IntN(5)
			got, remaining := pageAll(st, r, prefix, limit, rv)
			var keys []string
			for k := range want {
				if strings.HasPrefix(k, prefix) {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			var wantList []string
			for _, k := range keys {
				wantList = append(wantList, fmt.Sprintf("%s@%d", k, want[k]))
			}
			require.Equal(t, wantList, got, "rv %d prefix %q limit %d", rv, prefix, limit)
			for i, rem := range remaining {
				require.Equal(t, int64(len(keys)-(i+1)*limit), rem, "remainingItemCount after page %d", i)
			}
		}
	}
}

// pageAll lists every page and returns "key@rv" items and each page's remaining count.
func pageAll(st *store, r *resource, prefix string, limit int, rv uint64) ([]string, []int64) {
	var out []string
	var remaining []int64
	start := ""
	for {
		st.mu.Lock()
		res := st.listLocked(listSpec{r: r, prefix: prefix, start: start, limit: limit, atRV: rv, count: true})
		st.mu.Unlock()
		for _, o := range res.items {
			out = append(out, fmt.Sprintf("%s@%d", o.key, o.rv))
		}
		if !res.more() {
			return out, remaining
		}
		remaining = append(remaining, res.remaining)
		start = res.items[len(res.items)-1].key + "\x00"
	}
}

func TestHistoryWindow(t *testing.T) {
	now := int64(0)
	srv, err := New(Options{HistoryWindow: 10 * time.Second, Clock: func() time.Time { return time.Unix(now, 0) }})
	require.NoError(t, err)
	_, err = srv.PutPod(Pod{Namespace: "a", Name: "old"})
	require.NoError(t, err)
	old := srv.ResourceVersion()
	now = 20
	_, err = srv.PutPod(Pod{Namespace: "a", Name: "new"})
	require.NoError(t, err)
	srv.store.mu.Lock()
	floor := srv.store.floorLocked()
	srv.store.mu.Unlock()
	require.Equal(t, old, floor, "events older than the window are expired for new clients")
}
