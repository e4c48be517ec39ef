package controller

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kwatch/kwatch/kube"
)

// A second reader's tests of the reads from caches a write is not recorded
// against (expect_readers.go). Each test's comment tells what it showed of
// d999217, which the commits after it fixed; the two about late caches
// are open holes, skipped.

// readersGet is Reader.Get's loop (cache.go) on a rig cache: waitShown, the
// read of the cache (GetOwned), then readOlder. afterWait runs between
// waitShown and the read, afterRead between the read and readOlder, each in
// the first round only: the interleavings of a Get with the cache's
// goroutine. It returns what the Get returns: the object read (present
// false: none), or waitShown's error (a context.DeadlineExceeded after
// wait of fake time: the Get still waits).
func readersGet(t *testing.T, r *read2Rig, f *read2Cache, key string, wait time.Duration, afterWait, afterRead func()) (objState, error) {
	t.Helper()
	for round := 0; ; round++ {
		require.Less(t, round, 100, "Reader.Get spins: readOlder keeps sending it back to a waitShown that does not wait")
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		seen, err := r.e.waitShown(ctx, f.c, key)
		cancel()
		if err != nil {
			return objState{}, err
		}
		if round == 0 && afterWait != nil {
			afterWait()
		}
		st := f.at(key)
		if round == 0 && afterRead != nil {
			afterRead()
		}
		if !st.present {
			return st, nil
		}
		obj := &metav1.ObjectMeta{ResourceVersion: strconv.FormatUint(st.rv, 10), UID: types.UID(st.uid)}
		if !readOlder(seen, obj) {
			return st, nil
		}
	}
}

// kept reports whether the expectations keep a write of demo/name for reads.
func (r *read2Rig) kept(name string) bool {
	r.e.mu.Lock()
	defer r.e.mu.Unlock()
	return r.e.objects[objRef{resKeyOf(r.res), "demo/" + name}] != nil
}

// TestReadersReadOlderAfterTheCacheShowsTheWrite: the race the Get's
// re-check is to close, one step further. waitShown finds the app=a cache
// without x; the cache applies another writer's x at 5, the Get reads it,
// and the cache applies x leaving at 10 (this process's relabel) before
// readOlder looks: readOlder asks whether the cache shows the write *now*
// (it does) instead of whether the object read is older than it, and the
// Get returns x at 5. (Once every cache shows the write it is also dropped
// from e.objects, and readOlder finds no write at all.) A fix: compare
// what was read with the write whatever the cache shows now (the next
// round's read then finds the cache's newer state), keeping the write for
// as long as a Get may be between its read and its re-check, or taking
// the write to compare with before the read.
func TestReadersReadOlderAfterTheCacheShowsTheWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		a := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=a"}, 3)
		b := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=b"}, 9)
		r.write(kube.Written{Name: "x", ResourceVersion: "10", UID: "u1", Labels: map[string]string{"app": "b"}})
		r.event(b, 10, "demo/x", present("u1", 10))
		st, err := readersGet(t, r, a, "demo/x", time.Second,
			func() { r.event(a, 5, "demo/x", present("u1", 5)) },
			func() { r.event(a, 10, "demo/x", objState{}) })
		require.NoError(t, err)
		require.False(t, st.present && st.rv < 10, "the Get returned x at %d, from before this process's relabel at 10", st.rv)
	})
}

// TestReadersReadRacesTheCacheNoSpin: TestRead2ReadRacesTheCache through
// the Get's loop: the cache applies x at 5 between waitShown and the
// read; the re-check sends the Get back to waitShown, which now waits
// (the cache holds x at 5), and returns once the cache shows the relabel,
// with no x. Passes.
func TestReadersReadRacesTheCacheNoSpin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		a := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=a"}, 3)
		r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=b"}, 9)
		r.write(kube.Written{Name: "x", ResourceVersion: "10", UID: "u1", Labels: map[string]string{"app": "b"}})
		_, err := readersGet(t, r, a, "demo/x", time.Second, func() { r.event(a, 5, "demo/x", present("u1", 5)) }, nil)
		require.ErrorIs(t, err, context.DeadlineExceeded, "the Get waits again: the cache holds x at 5")
		done := make(chan objState, 1)
		go func() {
			st, err := readersGet(t, r, a, "demo/x", time.Minute, nil, nil)
			if err == nil {
				done <- st
			}
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		require.Empty(t, done)
		r.event(a, 10, "demo/x", objState{})
		synctest.Wait()
		require.Len(t, done, 1)
		require.False(t, (<-done).present)
	})
}

// TestReadersDeleteAfterRelabel: the out-of-scope case of
// TestRead2CacheOutOfScopeYetToSeeTheObject with this process deleting x
// after relabelling it. The relabel at 10 was kept for the lagging app=a
// cache; the delete (12) replaces it in e.objects and, not kept for reads
// (keptForReadsLocked is false for every delete), is dropped once its only
// holder, the app=b cache, shows it. The app=a cache then applies another
// writer's create of x at 5, and a Get from it returns x at 5, older than
// both of this process's writes. A delete whose answer names the uid and
// the version (delRV) could be kept for reads like any other write until
// every cache that may hold the object passes delRV, a read waiting while
// its cache holds that uid (or the object below delRV).
func TestReadersDeleteAfterRelabel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		a := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=a"}, 3)
		b := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=b"}, 9)
		r.write(kube.Written{Name: "x", ResourceVersion: "10", UID: "u1", Labels: map[string]string{"app": "b"}})
		r.event(b, 10, "demo/x", present("u1", 10))
		require.True(t, r.kept("x"), "the relabel is kept for the app=a cache")
		r.write(kube.Written{Name: "x", ResourceVersion: "12", UID: "u1", Labels: map[string]string{"app": "b"}, Deleted: true})
		r.event(b, 12, "demo/x", objState{})
		r.event(a, 5, "demo/x", present("u1", 5))
		require.True(t, r.blocked(t, a, "x"), "the app=a cache holds x at 5, before this process's relabel (10) and delete (12)")
	})
}

// TestReadersCacheBuiltAfterTheWriteWasDropped: the claim of
// TestRead2CacheBuiltAfterTheHoldersShowIt when the late cache is built
// after the write's only cache showed it, not before: no cache then keeps
// the write for reads (keptForReadsLocked looks at the caches that exist
// at the prune), it is dropped, and the late cache's first list, from a
// watch cache behind the write, gives a Get x at 8. A fix: a cache built
// while the manager runs lists at resourceVersion "" (or NotOlderThan the
// highest version this process wrote of its resource), or every write is
// kept for the bound whatever shows it and a late cache waits for it.
func TestReadersCacheBuiltAfterTheWriteWasDropped(t *testing.T) {
	t.Skip("open hole: a cache built after this process's write lists from a watch cache behind it (see the comment)")
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		c := r.cache(demo, 5)
		r.write(kube.Written{Name: "x", ResourceVersion: "10", UID: "u1"})
		r.event(c, 10, "demo/x", present("u1", 10))
		late := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "tier=web"}, 0)
		late.apply(8, "demo/x", present("u1", 8))
		r.e.observed(late.c.res, "demo/x")
		require.True(t, r.blocked(t, late, "x"), "the new cache holds x at 8, before this process's write at 10")
	})
}

// TestReadersLateCacheMissesTheCreate: a cache built after this
// process created x (10), whose first list (at 8, from a watch cache
// behind) has no x yet: a Get from it finds none, though the cache takes
// x and this process made it. readWaits waits only while the cache holds
// the object: the write keeps no labels to tell that the cache takes it.
// A holder in the same state waits. Beyond the letter of the claim (no
// object older than the write is returned), but a read of one's own
// create that finds nothing is what the expectations exist to prevent (a
// controller makes x again). Same fix as the hole above.
func TestReadersLateCacheMissesTheCreate(t *testing.T) {
	t.Skip("open hole: a cache built after this process's write lists from a watch cache behind it (see the comment)")
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		r.cache(demo, 5)
		r.write(kube.Written{Name: "x", ResourceVersion: "10", UID: "u1", Labels: map[string]string{"tier": "web"}})
		late := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "tier=web"}, 8)
		require.True(t, r.blocked(t, late, "x"), "the new cache, at 8, is still to see this process's create at 10")
	})
}

// TestReadersStatusDeleteTakesTheUidOfAKeptWrite: a key's wait
// changes with the change. This process (key k) updates x (u1) to 10;
// its cache, app=b, shows it; the write is kept for the lagging app=a
// cache, which may hold x. Another actor deletes x and makes it again
// (u2, 12). k deletes x, answered with a Status that names no uid (the
// server's answer may lack details.uid): afterUnshown gives the delete
// the uid of the kept write, u1, so the cache holding u2 "shows" it, the
// delete is not recorded, k does not park and a Get returns u2, which k
// deleted. Before d999217 the update was dropped once app=b showed it,
// and the delete took its uid from the cache, u2: k parked and the Get
// waited. A fix: take the uid from the earlier write only while some of
// its caches (w.caches) do not show it, as before, or from the holders
// first.
func TestReadersStatusDeleteTakesTheUidOfAKeptWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=a"}, 3)
		b := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=b"}, 9)
		k := keyRef{"ctl", Key{Namespace: "demo", Name: "x"}}
		var q counter
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", ResourceVersion: "10", UID: "u1",
			Labels: map[string]string{"app": "b"}})
		r.event(b, 10, "demo/x", present("u1", 10))
		require.False(t, r.e.park(k, q.add), "the cache shows the update")
		r.event(b, 11, "demo/x", objState{})
		r.event(b, 12, "demo/x", present("u2", 12))
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", Deleted: true})
		require.True(t, r.e.park(k, q.add), "the cache holds u2, which k deleted: k waits")
		require.True(t, r.blocked(t, b, "x"), "the cache holds u2, which this process deleted")
	})
}

// TestReadersFloorShownBeforeTheObjectComesBack (not d999217's: there
// before it, and left open by it): a write of x that takes it out of a
// lagging cache's scope waits on that cache with a floor, and the cache
// "shows" it once x is gone from it, though below the write's version;
// while it lags another writer may bring x back into its scope below the
// write's version, and then it holds x older than the write. The write
// was dropped meanwhile (keptForReadsLocked asks shows, which the floor
// answers), and a Get returns the older x. With expect_readers.go a fix
// is at hand: keep a write for reads while a cache that may hold the
// object is below its version by its numbers (storeRV, the object's
// version), not by its floors; a read then waits while the cache holds
// the object older than it.
//
// leaving: the app=a cache holds x at 3; another actor relabels x to
// app=c (5) and back to app=a (6); this process relabels it to app=b
// (10). The cache applies 5 (x leaves: "shown"), the app=b cache 10, and
// then the app=a cache 6: a Get returns x at 6.
//
// after an unshown write: the app=a cache lags (3); this process makes x
// with app=a (5); another actor relabels it to app=c (7) and back to app=a
// (8); this process relabels it to app=b (10). The relabel waits on the
// app=a cache with the floor 5 (afterUnshown); the cache applies 5 and 7
// ("shown"), then 8: a Get returns x at 8.
func TestReadersFloorShownBeforeTheObjectComesBack(t *testing.T) {
	t.Run("leaving", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newRead2Rig(kube.Pods)
			a := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=a"}, 3)
			a.apply(3, "demo/x", present("u1", 3))
			b := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=b"}, 9)
			r.write(kube.Written{Name: "x", ResourceVersion: "10", UID: "u1", Labels: map[string]string{"app": "b"}})
			r.event(a, 5, "demo/x", objState{})
			r.event(b, 10, "demo/x", present("u1", 10))
			r.event(a, 6, "demo/x", present("u1", 6))
			require.True(t, r.blocked(t, a, "x"), "the cache holds x at 6, before this process's relabel at 10")
		})
	})
	t.Run("after an unshown write", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := newRead2Rig(kube.Pods)
			a := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=a"}, 3)
			r.write(kube.Written{Name: "x", ResourceVersion: "5", UID: "u1", Labels: map[string]string{"app": "a"}})
			r.write(kube.Written{Name: "x", ResourceVersion: "10", UID: "u1", Labels: map[string]string{"app": "b"}})
			r.event(a, 5, "demo/x", present("u1", 5))
			r.event(a, 7, "demo/x", objState{})
			r.event(a, 8, "demo/x", present("u1", 8))
			require.True(t, r.blocked(t, a, "x"), "the cache holds x at 8, before this process's relabel at 10")
		})
	})
}

// TestReadersNoFalseWaits: reads that must not wait, from caches the
// write is not recorded against, with the write kept for a lagging one.
// Passes.
func TestReadersNoFalseWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		lag := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=a"}, 3) // keeps the write
		b := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=b"}, 9)
		newer := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=c"}, 9)
		reborn := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=d"}, 9)
		other := r.cache(kube.Scope{Namespace: "elsewhere"}, 2)
		oddRV := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=e"}, 9)
		r.write(kube.Written{Name: "x", ResourceVersion: "10", UID: "u1", Labels: map[string]string{"app": "b"}})
		r.event(b, 10, "demo/x", present("u1", 10))
		require.True(t, r.kept("x"))
		// Another writer relabels x to app=c (12): that cache holds a newer x.
		r.event(newer, 12, "demo/x", present("u1", 12))
		require.False(t, r.blocked(t, newer, "x"), "the cache holds x at 12, after the write")
		// Another writer deletes x and makes it again with app=d (14, u2).
		r.event(reborn, 14, "demo/x", present("u2", 14))
		require.False(t, r.blocked(t, reborn, "x"), "the cache holds a later incarnation")
		// A cache of another namespace holding an object of the same name.
		other.apply(2, "elsewhere/x", present("u9", 2))
		require.False(t, r.blocked(t, other, "x"))
		// A cache whose store's resourceVersion is not a number, holding
		// nothing of x.
		oddRV.mu.Lock()
		oddRV.rv = 0
		oddRV.mu.Unlock()
		require.False(t, r.blocked(t, oddRV, "x"))
		require.False(t, r.blocked(t, lag, "x"), "the lagging cache holds no x")
		st, err := readersGet(t, r, newer, "demo/x", time.Second, nil, nil)
		require.NoError(t, err)
		require.Equal(t, uint64(12), st.rv)
	})
}

// TestReadersClusterScoped: a cluster-scoped object (a node) relabelled
// out of a lagging cache's scope; a cache scoped to a namespace lists
// cluster-scoped objects all the same (the namespace does not apply), so
// it may hold the node: the write is kept for it. Passes.
func TestReadersClusterScoped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Nodes)
		a := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "role=a"}, 3)
		b := r.cache(kube.Scope{LabelSelector: "role=b"}, 9)
		r.e.record(context.Background(), kube.Written{Resource: kube.Nodes, Name: "n", ResourceVersion: "10", UID: "u1",
			Labels: map[string]string{"role": "b"}})
		r.event(b, 10, "n", present("u1", 10))
		require.False(t, r.blocked(t, b, "n"))
		r.e.mu.Lock()
		kept := r.e.objects[objRef{resKeyOf(kube.Nodes), "n"}] != nil
		r.e.mu.Unlock()
		require.True(t, kept, "the role=a cache may hold n and does not show the write")
		r.event(a, 5, "n", present("u1", 5))
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		require.ErrorIs(t, r.e.waitShownErr(ctx, a.c, "n"), context.DeadlineExceeded, "the cache holds n at 5")
		r.event(a, 10, "n", objState{})
		require.NoError(t, r.e.waitShownErr(context.Background(), a.c, "n"))
	})
}

// TestReadersFieldSelectors: which caches keep a write for reads, by
// their field selectors: metadata.name and metadata.namespace rule a
// cache out; any other field may come to match. Passes.
func TestReadersFieldSelectors(t *testing.T) {
	for _, tc := range []struct {
		fields string
		keeps  bool
	}{
		{"metadata.name=y", false},
		{"metadata.name!=x", false},
		{"metadata.name=x", true},
		{"metadata.name==x", true},
		{"metadata.namespace=elsewhere", false},
		{"metadata.namespace=demo,metadata.name!=y", true},
		{"spec.nodeName=n1", true},
		{"spec.nodeName=n1,metadata.name=y", false},
		{"status.phase!=Running", true},
	} {
		t.Run(tc.fields, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := newRead2Rig(kube.Pods)
				c := r.cache(demo, 9)
				r.cache(kube.Scope{Namespace: "demo", FieldSelector: tc.fields}, 3)
				r.write(kube.Written{Name: "x", ResourceVersion: "10", UID: "u1"})
				r.event(c, 10, "demo/x", present("u1", 10))
				require.Equal(t, tc.keeps, r.kept("x"))
			})
		})
	}
}

// TestReadersKeysDoNotWaitOnOtherCaches: a key's write of x waits on the
// caches that take it only, however far the others lag; the write is
// kept for reads meanwhile. Passes.
func TestReadersKeysDoNotWaitOnOtherCaches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=a"}, 3)
		r.cache(kube.Scope{Namespace: "demo", FieldSelector: "spec.nodeName=n1"}, 3)
		late := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "tier=web"}, 0)
		b := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=b"}, 9)
		k := keyRef{"ctl", Key{Namespace: "demo", Name: "x"}}
		var q counter
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", ResourceVersion: "10", UID: "u1",
			Labels: map[string]string{"app": "b"}})
		require.True(t, r.e.park(k, q.add))
		r.event(b, 10, "demo/x", present("u1", 10))
		require.Equal(t, int64(1), q.count(), "the event that shows the write queues k")
		require.False(t, r.e.park(k, q.add))
		require.True(t, r.kept("x"))
		_ = late
		// A write shown by its caches at once is kept for reads, and no key waits on it.
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", ResourceVersion: "9", UID: "u1",
			Labels: map[string]string{"app": "b"}})
		require.False(t, r.e.park(k, q.add))
		r.e.mu.Lock()
		require.Empty(t, r.e.keys)
		require.Empty(t, r.e.byObj)
		r.e.mu.Unlock()
	})
}

// TestReadersKeptWritesAreDropped: many writes kept for a quiet cache
// out of their scope are dropped once it passes them (a bookmark), at the
// bound or within overdueRecheck after it, given a write or an event;
// and those of a cache that never moves stay, one per object. Passes.
func TestReadersKeptWritesAreDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		quiet := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=a"}, 1)
		b := r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=b"}, 1)
		const n = 1000
		for i := range n {
			rv := uint64(10 + i)
			name := fmt.Sprint("p", i%100) // 100 objects, 10 writes each
			r.write(kube.Written{Name: name, ResourceVersion: strconv.FormatUint(rv, 10), UID: "u" + name, Labels: map[string]string{"app": "b"}})
			r.event(b, rv, "demo/"+name, present("u"+name, rv))
		}
		r.e.mu.Lock()
		require.Len(t, r.e.objects, 100, "one kept write per object")
		r.e.mu.Unlock()
		quiet.bookmark(10 + n)
		time.Sleep(DefaultExpectationTimeout + overdueRecheck)
		r.write(kube.Written{Name: "last", ResourceVersion: strconv.FormatUint(10+n, 10), UID: "ul", Labels: map[string]string{"app": "b"}})
		r.e.mu.Lock()
		defer r.e.mu.Unlock()
		require.Len(t, r.e.objects, 1, "only the last write, which app=b does not show yet, is left")
		require.Empty(t, r.e.overdue)
	})
}

// The randomized model: this process and another actor write pods
// demo/x0..x3 (create, relabel among app=a/b/c, delete) on a server whose
// history the model keeps; caches of several label scopes (and one of
// another namespace) apply that history each at its own pace, as a watch
// does (an event of an object in scope or leaving it, nothing else), take
// bookmarks, relist past a point, and, with late, new caches are built with
// a first list from anywhere behind the server. Reads run Reader.Get's loop
// (readersGet), with race a step of the read cache between its read and its
// re-check. The model checks, independently of the expectations' state:
//
//   - a read that returns gives, when the cache holds the object, a version
//     at or above this process's last write of it (for a delete, above it);
//   - a read of a cache that shows the last write by its own numbers (its
//     resourceVersion passed it, or it holds the object at or above it), or
//     of a cache of another namespace, neither waits nor fails;
//   - a read that waits or fails has a reason: the cache holds the object
//     older than the write, or it existed when this process wrote the
//     object (then it may be one of the write's caches);
//   - once every cache has passed every write, and the bound has passed,
//     e.objects keeps nothing but the write that triggered the sweep.

type rmOpts struct {
	// floors: a read of a cache that shows the write by a floor (it held
	// the object when the write took it out, or had not passed this
	// process's earlier write) is checked too; without it such a read
	// returning an older object is counted, not failed
	// (TestReadersFloorShownBeforeTheObjectComesBack).
	floors     bool
	ownDeletes bool // this process deletes
	late       bool // caches are built as the model runs
	race       bool // a read races its cache's next step
}

type rmObj struct {
	present bool
	uid     string
	label   string
	rv      uint64
}

type rmEvent struct {
	rv  uint64
	key string
	st  rmObj
}

type rmCache struct {
	i     int
	f     *read2Cache
	ns    string
	label string // "" any
	pos   int    // the next history event to apply
	born  uint64 // the server's version when the cache was built
}

type rmOwn struct {
	rv      uint64 // the write's version (a delete's: the version of its answer)
	deleted bool
}

type readersModel struct {
	t      *testing.T
	rng    *rand.Rand
	opts   rmOpts
	r      *read2Rig
	rv     uint64
	hist   []rmEvent
	server map[string]rmObj
	caches []*rmCache
	own    map[string]rmOwn
	// holders are the caches that take or hold each key at this
	// process's last write of it, or had not passed its write before;
	// floorish those of them the write does not take.
	holders  map[string]map[*rmCache]bool
	floorish map[string]map[*rmCache]bool
	floorHit int // reads that returned an older object from a floorish cache
	uids     int
	trace    []string
}

func (m *readersModel) logf(format string, args ...any) {
	m.trace = append(m.trace, fmt.Sprintf(format, args...))
}

func (m *readersModel) fail(format string, args ...any) {
	m.t.Helper()
	tail := m.trace
	if len(tail) > 60 {
		tail = tail[len(tail)-60:]
	}
	m.t.Fatalf("%s\n(last steps)\n%s", fmt.Sprintf(format, args...), strings.Join(tail, "\n"))
}

func (c *rmCache) takes(ns string, st rmObj) bool {
	return st.present && c.ns == ns && (c.label == "" || c.label == st.label)
}

func (c *rmCache) String() string {
	if c.label == "" {
		return fmt.Sprintf("#%d %s", c.i, c.ns)
	}
	return fmt.Sprintf("#%d %s/app=%s", c.i, c.ns, c.label)
}

func newReadersModel(t *testing.T, seed uint64, opts rmOpts) *readersModel {
	m := &readersModel{t: t, rng: rand.New(rand.NewPCG(seed, 7)), opts: opts, r: newRead2Rig(kube.Pods),
		rv: 1, server: map[string]rmObj{}, own: map[string]rmOwn{},
		holders: map[string]map[*rmCache]bool{}, floorish: map[string]map[*rmCache]bool{}}
	for _, sc := range []struct{ ns, label string }{{"demo", "a"}, {"demo", "b"}, {"demo", "c"}, {"demo", ""}, {"elsewhere", ""}} {
		m.addCache(sc.ns, sc.label, 0)
	}
	return m
}

// snapshot is the server's state after the first n events.
func (m *readersModel) snapshot(n int) map[string]rmObj {
	s := map[string]rmObj{}
	for _, e := range m.hist[:n] {
		s[e.key] = e.st
	}
	return s
}

func (m *readersModel) rvAt(n int) uint64 {
	if n == 0 {
		return 1
	}
	return m.hist[n-1].rv
}

// addCache builds a cache whose first list is the server's state after
// pos events.
func (m *readersModel) addCache(ns, label string, pos int) {
	sc := kube.Scope{Namespace: ns}
	if label != "" {
		sc.LabelSelector = "app=" + label
	}
	if len(m.caches) >= 5 { // a scope of its own, as a late cache has
		sc.LabelSelector = strings.TrimPrefix(sc.LabelSelector+fmt.Sprintf(",gen!=%d", len(m.caches)), ",")
	}
	c := &rmCache{i: len(m.caches), ns: ns, label: label, pos: pos, born: m.rv}
	f := &read2Cache{rv: m.rvAt(pos), objs: map[string]objState{}}
	for k, st := range m.snapshot(pos) {
		if c.takes("demo", st) {
			f.objs["demo/"+k] = present(st.uid, st.rv)
		}
	}
	c.f = f
	f.c = &cacheEntry{name: "pods [" + sc.String() + "]", res: resKeyOf(kube.Pods), scope: sc,
		storeRV: func() string {
			f.mu.Lock()
			defer f.mu.Unlock()
			return strconv.FormatUint(f.rv, 10)
		},
		state: func(key string, _ bool) objState { return f.at(key) }}
	m.r.m.mu.Lock()
	m.r.m.addCacheLocked(cacheKey{res: "v1/pods", scope: sc}, f.c)
	m.r.m.mu.Unlock()
	m.caches = append(m.caches, c)
	m.logf("cache %s built at %d (server %d)", c, f.rv, m.rv)
}

// write is a write of key by this process (recorded) or the other actor.
func (m *readersModel) write(mine bool, key string) {
	cur := m.server[key]
	labels := []string{"a", "b", "c"}
	var st rmObj
	deleted := false
	switch {
	case !cur.present:
		m.uids++
		st = rmObj{present: true, uid: fmt.Sprint("u", m.uids), label: labels[m.rng.IntN(3)]}
	case m.rng.IntN(4) == 0 && (!mine || m.opts.ownDeletes):
		deleted = true
	default:
		st = cur
		st.label = labels[m.rng.IntN(3)]
	}
	m.rv++
	st.rv = m.rv
	m.hist = append(m.hist, rmEvent{rv: m.rv, key: key, st: st})
	m.server[key] = st
	who := "other"
	if mine {
		who = "own"
	}
	m.logf("%s %s %s at %d (uid %s app=%s, deleted %v)", who, map[bool]string{true: "delete", false: "write"}[deleted], key, m.rv, cur.uid+st.uid, st.label+cur.label, deleted)
	if !mine {
		return
	}
	w := kube.Written{Resource: kube.Pods, Namespace: "demo", Name: key, ResourceVersion: strconv.FormatUint(m.rv, 10)}
	if deleted {
		w.UID, w.Labels, w.Deleted = cur.uid, map[string]string{"app": cur.label}, true
	} else {
		w.UID, w.Labels = st.uid, map[string]string{"app": st.label}
	}
	prev, wrote := m.own[key]
	hs, fl := map[*rmCache]bool{}, map[*rmCache]bool{}
	for _, c := range m.caches {
		c.f.mu.Lock()
		storeRV, held := c.f.rv, c.f.objs["demo/"+key]
		c.f.mu.Unlock()
		takes := !deleted && c.takes("demo", st)
		carried := wrote && m.holders[key][c] && storeRV < prev.rv && !(held.present && held.rv >= prev.rv)
		if takes || held.present || carried {
			hs[c] = true
		}
		if !deleted && (held.present || carried) && !takes {
			fl[c] = true
		}
	}
	m.holders[key], m.floorish[key] = hs, fl
	m.r.e.record(context.Background(), w)
	m.own[key] = rmOwn{rv: m.rv, deleted: deleted}
}

// step applies c's next event, as its watch does.
func (m *readersModel) step(c *rmCache) {
	if c.pos == len(m.hist) {
		return
	}
	e := m.hist[c.pos]
	c.pos++
	key := "demo/" + e.key
	switch {
	case c.takes("demo", e.st):
		m.r.event(c.f, e.rv, key, present(e.st.uid, e.st.rv))
	case c.f.at(key).present:
		m.r.event(c.f, e.rv, key, objState{})
	default:
		return
	}
	m.logf("cache %s applies %s at %d", c, e.key, e.rv)
}

func (m *readersModel) bookmark(c *rmCache) {
	c.f.bookmark(m.rvAt(c.pos))
	m.logf("cache %s bookmark %d", c, m.rvAt(c.pos))
}

// relist moves c to a later point of the history, as a list does after
// its watch expired.
func (m *readersModel) relist(c *rmCache) {
	to := c.pos + m.rng.IntN(len(m.hist)-c.pos+1)
	c.f.mu.Lock()
	before := c.f.objs
	c.f.objs = map[string]objState{}
	for k, st := range m.snapshot(to) {
		if c.takes("demo", st) {
			c.f.objs["demo/"+k] = present(st.uid, st.rv)
		}
	}
	c.f.rv = m.rvAt(to)
	after := c.f.objs
	c.f.mu.Unlock()
	c.pos = to
	m.logf("cache %s relists at %d", c, m.rvAt(to))
	for k := range before {
		m.r.e.observed(c.f.c.res, k)
	}
	for k := range after {
		m.r.e.observed(c.f.c.res, k)
	}
}

// read is a Get of key from c, checked against the model.
func (m *readersModel) read(c *rmCache, key string) {
	m.t.Helper()
	skey := "demo/" + key
	own, wrote := m.own[key]
	c.f.mu.Lock()
	storeRV, held := c.f.rv, c.f.objs[skey]
	c.f.mu.Unlock()
	older := held.present && wrote && held.rv < own.rv
	shows := wrote && (storeRV >= own.rv || held.present && held.rv >= own.rv)
	mayWait := older || (c.ns == "demo" && wrote && c.born <= own.rv && !shows)
	var afterWait, afterRead func()
	if m.opts.race && m.rng.IntN(2) == 0 {
		afterWait = func() {
			for range m.rng.IntN(3) {
				m.step(c)
			}
		}
		afterRead = func() {
			for range 1 + m.rng.IntN(5) {
				m.step(c)
			}
		}
	}
	st, err := readersGet(m.t, m.r, c.f, skey, 10*time.Millisecond, afterWait, afterRead)
	m.logf("read %s from %s (holds %v at %d, store %d): %v %v", key, c, held.present, held.rv, storeRV, st, err)
	if err != nil {
		var ns *NotShownError
		if !errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &ns) {
			m.fail("read: %v", err)
		}
		if !wrote || shows || c.ns != "demo" || !mayWait {
			m.fail("a read of %s from %s (holds %v at %d, store at %d; this process's last write %+v) does not return: %v",
				key, c, held.present, held.rv, storeRV, own, err)
		}
		return
	}
	if wrote && st.present && st.rv < own.rv {
		if !m.opts.floors && m.floorish[key][c] {
			m.floorHit++
			m.logf("(floor hole: %s at %d from %s)", key, st.rv, c)
			return
		}
		m.fail("a read of %s from %s returned it at %d, older than this process's last write %+v", key, c, st.rv, own)
	}
}

func (m *readersModel) run(steps int) {
	keys := []string{"x0", "x1", "x2", "x3"}
	for range steps {
		c := m.caches[m.rng.IntN(len(m.caches))]
		switch n := m.rng.IntN(100); {
		case n < 6:
			m.write(true, keys[m.rng.IntN(len(keys))])
		case n < 12:
			m.write(false, keys[m.rng.IntN(len(keys))])
		case n < 55:
			m.step(c)
		case n < 57:
			for c.pos < len(m.hist) {
				m.step(c)
			}
		case n < 58: // every cache catches up (a quiet moment)
			for _, c := range m.caches {
				for c.pos < len(m.hist) {
					m.step(c)
				}
				m.bookmark(c)
			}
		case n < 62:
			m.bookmark(c)
		case n < 64:
			m.relist(c)
		case n < 67:
			if m.opts.late && len(m.caches) < 16 {
				sc := m.caches[m.rng.IntN(5)]
				m.addCache(sc.ns, sc.label, len(m.hist)-m.rng.IntN(min(len(m.hist), 8)+1))
			}
		case n < 69:
			d := time.Duration(m.rng.IntN(40)) * time.Second
			time.Sleep(d)
			m.logf("sleep %v", d)
		default:
			m.read(c, keys[m.rng.IntN(len(keys))])
		}
	}
	// Every cache passes everything; past the bound a write sweeps the rest.
	for _, c := range m.caches {
		for c.pos < len(m.hist) {
			m.step(c)
		}
		m.bookmark(c)
	}
	for _, c := range m.caches {
		for _, k := range keys {
			m.read(c, k)
		}
	}
	time.Sleep(DefaultExpectationTimeout + overdueRecheck)
	m.write(true, "last")
	m.r.e.mu.Lock()
	defer m.r.e.mu.Unlock()
	for ref := range m.r.e.objects {
		if ref.key != "demo/last" {
			m.fail("every cache shows every write, yet %s is kept", ref)
		}
	}
}

func runReadersModel(t *testing.T, opts rmOpts, seeds int) {
	hits := 0
	for seed := range uint64(seeds) {
		ok := t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := newReadersModel(t, seed, opts)
				m.run(600)
				hits += m.floorHit
			})
		})
		if !ok {
			break // one trace is enough
		}
	}
	if hits > 0 {
		t.Logf("%d reads returned an older object from a cache that showed the write by a floor", hits)
	}
}

// TestReadersModel: the model without what the holes above leave open
// (this process's deletes, late caches, reads racing their cache; a read
// of an older object from a cache that showed the write by a floor is
// counted and logged, not failed). Passes: kept as a regression test.
func TestReadersModel(t *testing.T) { runReadersModel(t, rmOpts{}, 200) }

// TestReadersModelDeletes, ...Late, ...Race, ...Floors: the
// model with one of them each (TestReadersDeleteAfterRelabel,
// TestReadersCacheBuiltAfterTheWriteWasDropped,
// TestReadersReadOlderAfterTheCacheShowsTheWrite,
// TestReadersFloorShownBeforeTheObjectComesBack). Each failed on
// d999217 at its first failing seed, with the trace; Late is open.
func TestReadersModelDeletes(t *testing.T) { runReadersModel(t, rmOpts{ownDeletes: true}, 400) }
func TestReadersModelLate(t *testing.T) {
	t.Skip("open hole: a cache built after the write was dropped (TestReadersCacheBuiltAfterTheWriteWasDropped)")
	runReadersModel(t, rmOpts{late: true}, 200)
}
func TestReadersModelRace(t *testing.T)   { runReadersModel(t, rmOpts{race: true}, 200) }
func TestReadersModelFloors(t *testing.T) { runReadersModel(t, rmOpts{floors: true}, 400) }
