package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
)

// A third reading of the expectations' read side at 6782788 (expect.go,
// expect_readers.go, expect_floor.go). Tests once marked FAILS showed an
// interleaving the promise (expect.go) is broken in; the others pass and
// are kept as regression tests.

// TestFinalStatusDeleteGuessedUIDLifts: failed on 6782788 (safety), fixed since. The Status names
// no uid; cache a lags holding u1 (another actor deleted it and made u2),
// cache b holds u2, the one deleted. a comes first among the holders, so
// record guesses u1. The holders disagree, so statusDeleteBehind makes both
// wait for the server's version (12), but statusDeleteFloors makes those
// floors lift "once the cache is seen holding w's uid" (lifts: w.uid != "")
// and w.uid is the guess, u1, which a holds right now: the first prune
// (here the writing key's park, which settles its writes at once) lifts a's
// floor. a then shows the delete as soon as u1 goes, and when it applies
// u2's create a Get returns u2, which this process deleted.
// TestStatusDeleteReviewNoUIDGuessedFromTheCacheBehind passes only because
// nothing prunes the write while a still holds u1; in a reconcile the park
// does. A fix: a floor lifts only for a uid the answer named
// (statusDeleteFloors(…, lifts: wr.UID != "")).
func TestFinalStatusDeleteGuessedUIDLifts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.ConfigMaps)
		reads := 0
		r.e.serverRV = serverAt(12, &reads)
		a := r.cache(demo, 3)
		a.apply(3, "demo/x", present("u1", 3))
		b := r.cache(kube.Scope{}, 9)
		b.apply(9, "demo/x", present("u2", 9))
		r.holdersFirst(a)
		k := keyRef{"ctl", Key{Namespace: "demo", Name: "x"}}
		var q counter
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", Deleted: true})
		require.Equal(t, 1, reads)
		require.True(t, r.e.park(k, q.add), "the caches have not shown the delete")
		r.event(a, 8, "demo/x", objState{}) // u1 goes
		r.event(a, 9, "demo/x", present("u2", 9))
		require.True(t, r.blocked(t, a, "x"), "a holds u2, which this process deleted")
	})
}

// TestFinalStatusDeleteTakesTheUidOfAnUnshownWrite: failed on 6782788 (safety), fixed since. This
// process makes x (u1, app=a, at 10); cache b (all of demo) shows it, the
// app=a cache lags at 3. Another actor deletes u1 (11) and makes x again
// (u2, 12); b applies both. This process deletes x, answered with a Status
// naming no uid: afterUnshown takes the uid of the create (its app=a cache
// has not shown it), u1, though the server deleted u2. b, holding u2, then
// "shows" the delete at once (another uid than u1), is not waited on, and
// a Get from b returns u2, which this process deleted; the holders held
// one uid only (u2), so statusDeleteBehind read nothing either.
// TestReadersStatusDeleteTakesTheUidOfAKeptWrite is the same with the
// create shown everywhere (kept for reads only), which afterUnshown no
// longer trusts; an unshown write is no better witness when a holder holds
// another uid. A fix: take the uid from the holders first, or treat a
// holder's uid other than prev's as the holders disagreeing (every holder
// at the server's version).
func TestFinalStatusDeleteTakesTheUidOfAnUnshownWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.ConfigMaps)
		reads := 0
		r.e.serverRV = serverAt(13, &reads)
		r.cache(kube.Scope{Namespace: "demo", LabelSelector: "app=a"}, 3)
		b := r.cache(demo, 9)
		r.write(kube.Written{Name: "x", ResourceVersion: "10", UID: "u1", Labels: map[string]string{"app": "a"}})
		r.event(b, 10, "demo/x", present("u1", 10))
		r.event(b, 11, "demo/x", objState{})
		r.event(b, 12, "demo/x", present("u2", 12))
		r.write(kube.Written{Name: "x", Deleted: true})
		require.True(t, r.blocked(t, b, "x"), "b holds u2, which this process deleted")
	})
}

// The randomized model of expect_readers_review_internal_test.go with
// this process's deletes answered, a third of them, with a Status (no
// version; the uid named, or with noUID half the time not), the server's
// version read (serverRV) being the model's. A read then must not return
// the object below the delete's version, nor the incarnation deleted,
// from a cache that held the object when the delete was recorded or was
// one of this process's earlier write's unshown caches (a holder), but
// for the open holes expect.go lists: a cache that is no holder is yet to
// see the object come (TestStatusDeleteReviewCacheYetToSeeTheObject), or,
// without a uid, the holders agreed on one uid other than the deleted one
// (undetectable). Those reads are counted, not failed. Both failed on 6782788:
// TestFinalModelStatusDeletes at seed 6
// (TestFinalStatusDeleteReplacesAnUnshownStatusDelete), ...NoUID at seed
// 45 (not reduced to a small test yet).

type fmDelete struct {
	uid     string              // the incarnation deleted
	holders map[*rmCache]string // the caches holding the object at the record, and the uid each held
	open    bool                // a case expect.go leaves open
}

type finalModel struct {
	*readersModel
	noUID   bool
	dels    map[string]fmDelete // this process's last write of each key, when a Status delete
	openHit int
}

func (m *finalModel) write(mine bool, key string) {
	cur := m.server[key]
	if !mine || !cur.present || m.rng.IntN(3) != 0 {
		if mine {
			delete(m.dels, key)
		}
		m.readersModel.write(mine, key)
		return
	}
	// This process's delete, answered with a Status.
	m.rv++
	m.hist = append(m.hist, rmEvent{rv: m.rv, key: key, st: rmObj{rv: m.rv}})
	m.server[key] = rmObj{rv: m.rv}
	w := kube.Written{Resource: kube.Pods, Namespace: "demo", Name: key, UID: cur.uid, Deleted: true}
	if m.noUID && m.rng.IntN(2) == 0 {
		w.UID = ""
	}
	d := fmDelete{uid: cur.uid, holders: map[*rmCache]string{}}
	uids := map[string]bool{}
	for _, c := range m.caches {
		if st := c.f.at("demo/" + key); st.present {
			d.holders[c] = st.uid
			uids[st.uid] = true
		}
	}
	// The caches of this process's earlier write that have not shown it
	// (afterUnshown) wait too.
	m.r.e.mu.Lock()
	if prev := m.r.e.objects[objRef{resKeyOf(kube.Pods), "demo/" + key}]; prev != nil {
		for _, c := range m.caches {
			if _, ok := d.holders[c]; !ok && prev.waitsFor(c.f.c) {
				d.holders[c] = ""
			}
		}
	}
	m.r.e.mu.Unlock()
	if w.UID == "" && len(uids) == 1 && !uids[cur.uid] {
		d.open = true
	}
	m.logf("own status delete %s at %d (uid %s named %q, holders %v, open %v)", key, m.rv, cur.uid, w.UID, d.holders, d.open)
	m.holders[key], m.floorish[key] = map[*rmCache]bool{}, map[*rmCache]bool{}
	m.r.e.record(context.Background(), w)
	m.own[key] = rmOwn{rv: m.rv, deleted: true}
	m.dels[key] = d
}

// read is readersModel.read's Get, checked for Status deletes as above.
func (m *finalModel) read(c *rmCache, key string) {
	d, ok := m.dels[key]
	if !ok {
		m.readersModel.read(c, key)
		return
	}
	skey := "demo/" + key
	held := c.f.at(skey)
	st, err := readersGet(m.t, m.r, c.f, skey, 10*time.Millisecond, nil, nil)
	m.logf("read %s from %s (holds %v %s at %d): %v %v", key, c, held.present, held.uid, held.rv, st, err)
	if err != nil {
		var ns *NotShownError
		if !errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &ns) {
			m.fail("read: %v", err)
		}
		if c.ns != "demo" || (c.f.storeRVNum() >= m.own[key].rv && !(held.present && held.uid == d.uid)) {
			m.fail("a read of %s from %s, past the delete and holding nothing deleted, does not return: %v", key, c, err)
		}
		return
	}
	if !st.present {
		return
	}
	_, holder := d.holders[c]
	if st.uid == d.uid || (holder && st.rv < m.own[key].rv) {
		if d.open || !holder {
			// !holder: a cache yet to see the object come
			// (TestStatusDeleteReviewCacheYetToSeeTheObject).
			m.openHit++
			m.logf("(open hole: %s %s at %d from %s)", key, st.uid, st.rv, c)
			return
		}
		m.t.Log(strings.Join(m.trace, "\n"))
		m.fail("a read of %s from %s returned %s at %d, older than this process's Status delete of %s at %d", key, c, st.uid, st.rv, d.uid, m.own[key].rv)
	}
}

func (m *finalModel) run(steps int) {
	keys := []string{"x0", "x1", "x2", "x3"}
	for range steps {
		c := m.caches[m.rng.IntN(len(m.caches))]
		switch n := m.rng.IntN(100); {
		case n < 8:
			m.write(true, keys[m.rng.IntN(len(keys))])
		case n < 16:
			m.write(false, keys[m.rng.IntN(len(keys))])
		case n < 55:
			m.step(c)
		case n < 57:
			for c.pos < len(m.hist) {
				m.step(c)
			}
		case n < 62:
			m.bookmark(c)
		case n < 64:
			m.relist(c)
		case n < 66:
			d := time.Duration(m.rng.IntN(40)) * time.Second
			time.Sleep(d)
			m.logf("sleep %v", d)
		default:
			m.read(c, keys[m.rng.IntN(len(keys))])
		}
	}
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
	m.readersModel.write(true, "last")
	m.r.e.mu.Lock()
	defer m.r.e.mu.Unlock()
	for ref := range m.r.e.objects {
		if ref.key != "demo/last" {
			m.fail("every cache shows every write, yet %s is kept", ref)
		}
	}
}

func runFinalModel(t *testing.T, noUID bool, seeds int) {
	open := 0
	for seed := range uint64(seeds) {
		ok := t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := &finalModel{readersModel: newReadersModel(t, seed, rmOpts{ownDeletes: true, floors: true}), noUID: noUID,
					dels: map[string]fmDelete{}}
				m.r.e.serverRV = func(context.Context, kube.Resource, string) (uint64, error) { return m.rv, nil }
				m.run(600)
				open += m.openHit
			})
		})
		if !ok {
			break
		}
	}
	if open > 0 {
		t.Logf("%d reads returned an older object in a case expect.go leaves open", open)
	}
}

// TestFinalModelStatusDeletes: the model with Status deletes naming the uid.
func TestFinalModelStatusDeletes(t *testing.T) { runFinalModel(t, false, 300) }

// TestFinalModelStatusDeletesNoUID: and some naming none.
func TestFinalModelStatusDeletesNoUID(t *testing.T) { runFinalModel(t, true, 300) }

func (f *read2Cache) storeRVNum() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rv
}

// TestFinalStatusDeleteReplacesAnUnshownStatusDelete: failed on 6782788 (safety), fixed since,
// found by TestFinalModelStatusDeletes (seed 6). Cache c lags at 3. This
// process makes x (u1, at 9), and deletes it, answered with a Status
// naming u1 (c waits with the floor 9, the create's). Another actor makes
// x again (u2, 17), and this process deletes that too, a Status naming u2.
// The second delete replaces the first in e.objects (a Status delete is
// taken as the later write) with the floor 9 and keepRV 9, but only the
// uid u2: c applies u1's create at 9 (or a later version of u1), passes
// the floor, holds another uid than u2, and "shows" the delete; a Get
// returns u1, which this process deleted, and the writing key runs. No
// holder held x at either record, so nothing read the server's version.
// A fix: a delete that replaces an unshown delete of another uid keeps
// that uid as stale too (or gives its caches the server's version).
func TestFinalStatusDeleteReplacesAnUnshownStatusDelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.ConfigMaps)
		reads := 0
		r.e.serverRV = serverAt(18, &reads)
		c := r.cache(demo, 3)
		k := keyRef{"ctl", Key{Namespace: "demo", Name: "x"}}
		var q counter
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", ResourceVersion: "9", UID: "u1"})
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", UID: "u1", Deleted: true})
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", UID: "u2", Deleted: true})
		require.True(t, r.e.park(k, q.add))
		r.event(c, 9, "demo/x", present("u1", 9))
		require.True(t, r.blocked(t, c, "x"), "c holds u1, which this process deleted")
		require.True(t, r.e.park(k, q.add), "c has not shown the deletes")
	})
}

// TestFinalReadersModelCombined: the earlier model with this process's
// deletes, floors checked and reads racing their cache at once (each
// was run alone before), more seeds. Passes: kept as a regression test.
func TestFinalReadersModelCombined(t *testing.T) {
	runReadersModel(t, rmOpts{ownDeletes: true, floors: true, race: true}, 400)
}

// TestFinalStatusDeleteThenAnotherActorsCreate: this process deletes x
// (u1, a Status); the server's version read after it is 90; another actor
// made x again (u2) at 88, between the delete and the read. A cache past
// 90 holds u2 at 88, below the delete's read version: the Get returns it,
// at once. Before, readOlder took u2 at 88 for older than the delete and
// sent the Get back until maxReadRounds, a *NotShownError.
func TestFinalStatusDeleteThenAnotherActorsCreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.ConfigMaps)
		r.e.serverRV = func(context.Context, kube.Resource, string) (uint64, error) { return 90, nil }
		c := r.cache(demo, 80)
		c.apply(80, "demo/x", present("u1", 80))
		r.write(kube.Written{Name: "x", UID: "u1", Deleted: true})
		r.event(c, 85, "demo/x", objState{})
		r.event(c, 88, "demo/x", present("u2", 88))
		c.bookmark(91)
		st, err := readersGet(t, r, c, "demo/x", time.Second, nil, nil)
		require.NoError(t, err)
		require.True(t, st.present && st.uid == "u2", "the Get returns u2, made after the delete: %+v", st)
	})
}
