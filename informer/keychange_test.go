package informer

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/testutil"
)

// A KeyChangeHandler learns which keys come from the initial list and
// which from a resync; a live add is neither.
func TestKeyChangeHandler(t *testing.T) {
	for _, mode := range []StoreMode{StoreTyped, StoreCompact} {
		t.Run(mode.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := &testutil.MemNet{}
				newMemScripted(t, n, "api:80", answer(200, listJSON("10", "", podJSON("a", "5"))),
					stream(false, eventJSON("ADDED", podJSON("b", "11"))))
				opts := memOptions(t, n, "api:80")
				opts.ResyncPeriod = 10 * time.Second
				opts.Store = mode
				inf, err := New(opts)
				require.NoError(t, err)
				var mu sync.Mutex
				var got []string
				_, err = inf.AddHandler(KeyChangeHandler[*testPod](func(key string, c KeyChange) {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, key+map[KeyChange]string{{InitialList: true}: " initial", {Resync: true}: " resync"}[c])
				}), HandlerOptions{Resync: true})
				require.NoError(t, err)
				start(t, inf)
				time.Sleep(15 * time.Second)
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				require.GreaterOrEqual(t, len(got), 4)
				require.Equal(t, []string{"ns/a initial", "ns/b"}, got[:2])
				require.ElementsMatch(t, []string{"ns/a resync", "ns/b resync"}, got[2:4]) // a resync's order is the store's
			})
		})
	}
}
