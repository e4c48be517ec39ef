package controller

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
)

// A second reader's tests of the re-check (expect_recheck.go).

// keyCtx is the context of a reconcile of kr: what it writes is recorded
// against kr.
func keyCtx(kr keyRef) context.Context {
	return context.WithValue(context.Background(), reconcileKey{}, kr)
}

// recheckDue reports whether a re-check is armed.
func recheckDue(e *expectations) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.recheck != nil
}

// counter is an add of a parked key that counts its calls.
type counter struct{ n atomic.Int64 }

func (c *counter) add(Key)      { c.n.Add(1) }
func (c *counter) count() int64 { return c.n.Load() }

// TestRecheckReviewRVBackThenForward: a re-check looks at a key parked
// since the last one whatever its caches' resourceVersions. If the store's
// resourceVersion went back meanwhile (the informer relists from "" a
// server restored to an older state: relistLatest) and came forward to
// the same string, the key parked in between (its write above the lower
// version) is shown. Before keyWait.fresh, movedLocked saw no cache move
// and every re-check skipped the key until its bound.
func TestRecheckReviewRVBackThenForward(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		c := r.cache(demo, 20)
		a := keyRef{"ctl", Key{Namespace: "demo", Name: "a"}}
		b := keyRef{"ctl", Key{Namespace: "demo", Name: "b"}}
		var qa, qb counter
		r.e.record(keyCtx(a), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", ResourceVersion: "30", UID: "ux"})
		require.True(t, r.e.park(a, qa.add), "a waits for version 30")
		time.Sleep(shownRecheck + time.Millisecond)
		synctest.Wait() // a re-check has read the cache at 20

		c.bookmark(10) // the server was restored: the cache relists at 10
		r.e.record(keyCtx(b), kube.Written{Resource: r.res, Namespace: "demo", Name: "y", ResourceVersion: "15", UID: "uy"})
		require.True(t, r.e.park(b, qb.add), "b waits for version 15")
		c.bookmark(20) // y made and deleted during a 410: the relist is at 20, with no event of y
		require.True(t, c.c.shows(r.e.keys[b].writes[0]), "the cache shows b's write")

		time.Sleep(3 * shownRecheck)
		synctest.Wait()
		if qb.count() == 0 {
			t.Errorf("b's write has been shown for %v and b is not queued", 3*shownRecheck)
		}
		time.Sleep(DefaultExpectationTimeout)
		synctest.Wait()
		require.EqualValues(t, 1, qb.count(), "the bound queues b: latency only")
		require.EqualValues(t, 1, qa.count(), "a's bound passed")
	})
}

// TestRecheckReviewWriteAddedWhileParked: a write recorded against a
// parked key (a goroutine of its last reconcile still writing with its
// context) holds the key parked until every cache shows it too, though
// the caches of the key's first write show that one without an event;
// once they show both, a re-check queues it.
func TestRecheckReviewWriteAddedWhileParked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		c1, c2 := r.cache(demo, 5), r.cache(kube.Scope{}, 5)
		k := keyRef{"ctl", Key{Namespace: "demo", Name: "k"}}
		var q counter
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", ResourceVersion: "10", UID: "ux"})
		require.True(t, r.e.park(k, q.add))
		time.Sleep(shownRecheck + time.Millisecond)
		synctest.Wait()
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "y", ResourceVersion: "12", UID: "uy"})
		c1.bookmark(11)
		c2.bookmark(11)
		time.Sleep(2 * shownRecheck)
		synctest.Wait()
		require.Zero(t, q.count(), "no cache shows y's version 12")
		c1.bookmark(12)
		time.Sleep(2 * shownRecheck)
		synctest.Wait()
		require.Zero(t, q.count(), "the cache of every namespace does not show y yet")
		c2.bookmark(12)
		time.Sleep(shownRecheck + time.Millisecond)
		synctest.Wait()
		require.EqualValues(t, 1, q.count(), "a re-check queued the key")
		require.False(t, recheckDue(r.e), "nothing is parked: no re-check is due")
	})
}

// TestRecheckReviewDeleteShownByARelistPastItsFloor: a delete of an
// object the cache has not seen come (its answer showed the object at 20,
// the cache is at 10) waits until the cache has passed 20; another
// object's event that leaves the cache below 20 does not show it, and a
// relist past 20 (the object made and deleted during a 410) does, with
// no event of the object: a re-check queues the key.
func TestRecheckReviewDeleteShownByARelistPastItsFloor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		c := r.cache(demo, 10)
		k := keyRef{"ctl", Key{Namespace: "demo", Name: "k"}}
		var q counter
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", ResourceVersion: "20", UID: "ux", Deleted: true})
		require.True(t, r.e.park(k, q.add), "the cache is yet to see x come")
		r.event(c, 15, "demo/z", present("uz", 15))
		time.Sleep(2 * shownRecheck)
		synctest.Wait()
		require.Zero(t, q.count(), "the cache at 15 may be yet to see x come at 20")
		c.bookmark(19)
		time.Sleep(2 * shownRecheck)
		synctest.Wait()
		require.Zero(t, q.count(), "the cache at 19 may be yet to see x come at 20")
		c.bookmark(25) // a relist at 25 without x
		time.Sleep(shownRecheck + time.Millisecond)
		synctest.Wait()
		require.EqualValues(t, 1, q.count(), "a re-check queued the key")
	})
}

// TestRecheckReviewUncertainReadThenBookmark: a write of unknown outcome
// whose server version is read while the key stays parked (the bound's
// timer queued it at the settle time, and the worker read the version,
// then parked it again) is shown by a bookmark past that version: a
// re-check queues the key, not before.
func TestRecheckReviewUncertainReadThenBookmark(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		r.e.uncertainHolders = r.m.uncertainHolders
		r.e.serverRV = func(context.Context, kube.Resource, string) (uint64, error) { return 50, nil }
		c := r.cache(demo, 40)
		k := keyRef{"ctl", Key{Namespace: "demo", Name: "k"}}
		var q counter
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", Uncertain: true})
		require.True(t, r.e.park(k, q.add))
		c.bookmark(45) // the cache moves: re-checks look at the key, which waits for the settle time
		time.Sleep(uncertainSettle - time.Second)
		synctest.Wait()
		require.Zero(t, q.count(), "the server may still apply the write: no re-check settles it")
		time.Sleep(time.Second + time.Millisecond)
		synctest.Wait()
		require.EqualValues(t, 1, q.count(), "the settle time queued the key for its read")
		// The worker that takes it: the read, then the gate's park.
		r.e.settleUncertain(keyCtx(k), k)
		require.True(t, r.e.park(k, q.add), "the cache at 45 has not passed the server's 50")
		time.Sleep(2 * shownRecheck)
		synctest.Wait()
		require.EqualValues(t, 1, q.count(), "not shown yet")
		c.bookmark(50)
		time.Sleep(shownRecheck + time.Millisecond)
		synctest.Wait()
		require.EqualValues(t, 2, q.count(), "a re-check queued the key")
	})
}

// TestRecheckReviewStopEndsTheRecheck: once the controllers stopped, no
// re-check is due, none runs (one that fired just before stop and waits
// for the lock finds the stop), and neither a park nor a read arms one.
func TestRecheckReviewStopEndsTheRecheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		c := r.cache(demo, 5)
		k := keyRef{"ctl", Key{Namespace: "demo", Name: "k"}}
		var q counter
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", ResourceVersion: "10", UID: "ux"})
		require.True(t, r.e.park(k, q.add))
		require.True(t, recheckDue(r.e))
		r.e.stop()
		require.False(t, recheckDue(r.e), "stop disarms the re-check")
		c.bookmark(12)
		r.e.recheckShown() // a re-check that fired before stop took the lock
		require.False(t, recheckDue(r.e), "it does not arm another")

		// A late write and park (a reconcile past the shutdown timeout), a read.
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "y", ResourceVersion: "20", UID: "uy"})
		r.e.park(k, q.add)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		require.Error(t, r.e.waitShownErr(ctx, c.c, "demo/y"))
		require.False(t, recheckDue(r.e), "no re-check once stopped")
		c.bookmark(25)
		time.Sleep(5 * shownRecheck)
		synctest.Wait()
		require.Zero(t, q.count(), "no re-check queued a key after stop")
	})
}

// TestRecheckReviewNoRecheckOnceNothingWaits: a key whose write no cache
// ever shows is queued at its bound, and then no re-check is due; a read
// past its bound (it gets a *NotShownError at once) arms at most one
// re-check, which does not arm another.
func TestRecheckReviewNoRecheckOnceNothingWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		c := r.cache(demo, 5)
		k := keyRef{"ctl", Key{Namespace: "demo", Name: "k"}}
		var q counter
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", ResourceVersion: "10", UID: "ux"})
		require.True(t, r.e.park(k, q.add))
		time.Sleep(DefaultExpectationTimeout + time.Millisecond)
		synctest.Wait()
		require.EqualValues(t, 1, q.count(), "queued at the bound")
		time.Sleep(shownRecheck + time.Millisecond)
		synctest.Wait()
		require.False(t, recheckDue(r.e), "nothing is parked: no re-check is due")

		var nse *NotShownError
		require.ErrorAs(t, r.e.waitShownErr(context.Background(), c.c, "demo/x"), &nse, "the read is past the bound")
		time.Sleep(shownRecheck + time.Millisecond)
		synctest.Wait()
		require.False(t, recheckDue(r.e), "no read waits: no re-check is due")
	})
}

// fakeLimiter counts the Forgets that reach the inner rate limiter.
type fakeLimiter struct{ forgets atomic.Int64 }

func (f *fakeLimiter) When(Key) time.Duration { return 0 }
func (f *fakeLimiter) NumRequeues(Key) int    { return 0 }
func (f *fakeLimiter) Forget(Key)             { f.forgets.Add(1) }

// TestRecheckReviewQueuedBeforeTheParkedForget: a re-check that queues a
// parked key before the runner's Forget of the parked reconcile leaves
// the key's backoff as it was: that Forget is skipped, the next one is
// not.
func TestRecheckReviewQueuedBeforeTheParkedForget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRead2Rig(kube.Pods)
		c := r.cache(demo, 5)
		inner := &fakeLimiter{}
		l := r.e.limiter("ctl", inner)
		k := keyRef{"ctl", Key{Namespace: "demo", Name: "k"}}
		var q counter
		r.e.record(keyCtx(k), kube.Written{Resource: r.res, Namespace: "demo", Name: "x", ResourceVersion: "10", UID: "ux"})
		require.True(t, r.e.park(k, q.add))
		c.bookmark(10)
		time.Sleep(shownRecheck + time.Millisecond)
		synctest.Wait()
		require.EqualValues(t, 1, q.count())
		l.Forget(k.key) // the parked reconcile's
		require.Zero(t, inner.forgets.Load(), "the parked reconcile's Forget is skipped")
		l.Forget(k.key) // the next reconcile's
		require.EqualValues(t, 1, inner.forgets.Load())
	})
}

// TestRecheckReviewRandomized drives the expectations over a few caches
// of one resource with random sequences of writes by keys (some while
// the key is parked), parks, watch events, bookmarks, relists (which may
// skip an object's whole life) and other objects' events, against a
// model of a server whose caches each hold its state at their own
// resourceVersion. It checks that a key is never let run or queued while
// a cache does not show one of its writes (unless its bound passed),
// that a parked key whose writes every cache shows is queued within
// shownRecheck, that a re-check is due while a key is parked, and that
// none is once nothing is.
func TestRecheckReviewRandomized(t *testing.T) {
	for seed := range uint64(300) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { newRecheckSim(t, seed).run(300) })
		})
	}
}

// simCache is a cache of the model: the server's state at rv.
type simCache struct {
	rv   uint64
	objs map[string]objState
	pos  int // the server's events applied
	c    *cacheEntry
}

type simEvent struct {
	rv  uint64
	key string
	st  objState // st.present false: a delete
}

type simKey struct {
	kr     keyRef
	parked bool
	need   uint64    // the version every cache must reach to show the writes since the key last ran or was queued
	last   time.Time // the last of those writes
	shown  time.Time // since when a parked key's writes are shown; zero: not shown
}

type recheckSim struct {
	t   *testing.T
	rng *rand.Rand
	e   *expectations

	mu     sync.Mutex // guards what follows; never held while calling e
	rv     uint64
	objs   map[string]objState // the server's
	log    []simEvent
	caches []*simCache
	keys   []*simKey
	uids   int
}

func newRecheckSim(t *testing.T, seed uint64) *recheckSim {
	s := &recheckSim{t: t, rng: rand.New(rand.NewPCG(seed, 7)), rv: 1, objs: map[string]objState{}}
	m := &Manager{caches: map[cacheKey]*cacheEntry{}}
	scopes := []kube.Scope{demo, {}, {Namespace: "demo", FieldSelector: "metadata.namespace=demo"}}
	for _, sc := range scopes[:1+s.rng.IntN(len(scopes))] {
		sc2 := &simCache{rv: 1, objs: map[string]objState{}}
		sc2.c = &cacheEntry{name: "configmaps [" + sc.String() + "]", res: resKeyOf(kube.ConfigMaps), scope: sc,
			storeRV: func() string {
				s.mu.Lock()
				defer s.mu.Unlock()
				return strconv.FormatUint(sc2.rv, 10)
			},
			state: func(key string, _ bool) objState {
				s.mu.Lock()
				defer s.mu.Unlock()
				return sc2.objs[key]
			}}
		m.addCacheLocked(cacheKey{res: "v1/configmaps", scope: sc}, sc2.c)
		s.caches = append(s.caches, sc2)
	}
	s.e = newExpectations(DefaultExpectationTimeout, slog.New(slog.NewTextHandler(io.Discard, nil)), nil, m.holders)
	s.e.cachesOf = m.cachesOf
	for i := range 3 {
		s.keys = append(s.keys, &simKey{kr: keyRef{"ctl", Key{Namespace: "demo", Name: fmt.Sprint("k", i)}}})
	}
	return s
}

// shownLocked reports whether every cache shows k's writes.
func (s *recheckSim) shownLocked(k *simKey) bool {
	for _, c := range s.caches {
		if c.rv < k.need {
			return false
		}
	}
	return true
}

// mayRunLocked reports whether k may run: its writes are shown, or the
// bound passed since the last of them.
func (s *recheckSim) mayRunLocked(k *simKey) bool {
	return s.shownLocked(k) || !time.Now().Before(k.last.Add(DefaultExpectationTimeout))
}

// queued is a parked key's add.
func (s *recheckSim) queued(k *simKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !k.parked {
		s.t.Errorf("%v queued while not parked", k.kr.key)
	}
	if !s.mayRunLocked(k) {
		s.t.Errorf("%v queued at %v: its writes need %d, the caches are at %v", k.kr.key, time.Now(), k.need, s.rvsLocked())
	}
	k.parked, k.need, k.last, k.shown = false, 0, time.Time{}, time.Time{}
}

func (s *recheckSim) rvsLocked() []uint64 {
	var rvs []uint64
	for _, c := range s.caches {
		rvs = append(rvs, c.rv)
	}
	return rvs
}

// write is a write of k's (a reconcile's, or one made with its context
// while it is parked): the server applies it, the expectations record it.
func (s *recheckSim) write(k *simKey) {
	s.mu.Lock()
	name := []string{"a", "b", "c"}[s.rng.IntN(3)]
	key := "demo/" + name
	st, ok := s.objs[key]
	s.rv++
	w := kube.Written{Resource: kube.ConfigMaps, Namespace: "demo", Name: name}
	switch {
	case ok && s.rng.IntN(2) == 0: // a delete: its answer shows the object's last version
		w.Deleted, w.UID, w.ResourceVersion = true, st.uid, strconv.FormatUint(st.rv, 10)
		delete(s.objs, key)
		s.log = append(s.log, simEvent{s.rv, key, objState{}})
	default:
		if !ok {
			s.uids++
			st.uid, st.present = fmt.Sprint("u", s.uids), true
		}
		st.rv = s.rv
		s.objs[key] = st
		s.log = append(s.log, simEvent{s.rv, key, st})
		w.UID, w.ResourceVersion = st.uid, strconv.FormatUint(st.rv, 10)
	}
	k.need, k.last = max(k.need, s.rv), time.Now()
	s.mu.Unlock()
	s.e.record(keyCtx(k.kr), w)
}

// other is another actor's write, of an object no key writes, or of
// another resource (the version moves, with no event of this one).
func (s *recheckSim) other() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rng.IntN(2) == 0 {
		s.rv += 1 + uint64(s.rng.IntN(3))
		return
	}
	s.rv++
	st := objState{present: true, uid: "uz", rv: s.rv}
	s.objs["demo/z"] = st
	s.log = append(s.log, simEvent{s.rv, "demo/z", st})
}

// step moves cache c on: its next event, a bookmark, or a relist.
func (s *recheckSim) step(c *simCache) {
	var applied []string
	s.mu.Lock()
	switch n := s.rng.IntN(20); {
	case n < 9 && c.pos < len(s.log): // the next event
		ev := s.log[c.pos]
		c.pos++
		c.rv = ev.rv
		if ev.st.present {
			c.objs[ev.key] = ev.st
		} else {
			delete(c.objs, ev.key)
		}
		applied = append(applied, ev.key)
	case n < 15: // a bookmark: up to the next event's version, or the server's
		rv := s.rv
		if c.pos < len(s.log) {
			rv = s.log[c.pos].rv - 1
		}
		c.rv = max(c.rv, rv)
	default: // a relist of the server's state, telling each key it changed
		for key, st := range s.objs {
			if old, ok := c.objs[key]; !ok || old.rv != st.rv || old.uid != st.uid {
				applied = append(applied, key)
			}
		}
		for key := range c.objs {
			if _, ok := s.objs[key]; !ok {
				applied = append(applied, key)
			}
		}
		c.objs = map[string]objState{}
		for key, st := range s.objs {
			c.objs[key] = st
		}
		c.rv, c.pos = s.rv, len(s.log)
	}
	s.mu.Unlock()
	for _, key := range applied {
		s.e.observed(c.c.res, key)
	}
}

// gate is a worker taking k: parked, or let run.
func (s *recheckSim) gate(k *simKey) {
	parked := s.e.park(k.kr, func(Key) { s.queued(k) })
	s.mu.Lock()
	defer s.mu.Unlock()
	if parked {
		k.parked = true
		return
	}
	if !s.mayRunLocked(k) {
		s.t.Errorf("%v let run at %v: its writes need %d, the caches are at %v", k.kr.key, time.Now(), k.need, s.rvsLocked())
	}
	k.need, k.last = 0, time.Time{}
}

// check looks at the parked keys after a step: a re-check is due, and
// none whose writes were shown more than shownRecheck ago is left.
func (s *recheckSim) check() {
	s.e.mu.Lock()
	due, parked := s.e.recheck != nil, 0
	for _, kw := range s.e.keys {
		if kw.add != nil {
			parked++
		}
	}
	s.e.mu.Unlock()
	if parked > 0 && !due {
		s.t.Errorf("%d keys parked and no re-check due", parked)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for _, k := range s.keys {
		switch {
		case !k.parked || !s.shownLocked(k):
			k.shown = time.Time{}
		case k.shown.IsZero():
			k.shown = now
		case now.Sub(k.shown) > shownRecheck:
			s.t.Errorf("%v parked, its writes shown since %v, at %v", k.kr.key, k.shown, now)
			k.shown = now // once
		}
	}
}

func (s *recheckSim) run(steps int) {
	for range steps {
		k := s.keys[s.rng.IntN(len(s.keys))]
		s.mu.Lock()
		parked := k.parked
		s.mu.Unlock()
		switch n := s.rng.IntN(20); {
		case n < 4 && !parked: // the reconcile writes
			s.write(k)
		case n < 1 && parked: // a write with a parked key's context
			s.write(k)
		case n < 8 && !parked:
			s.gate(k)
		case n < 10:
			s.other()
		case n < 16:
			s.step(s.caches[s.rng.IntN(len(s.caches))])
		default:
			time.Sleep(time.Duration(1+s.rng.IntN(1500)) * time.Millisecond)
			synctest.Wait()
		}
		s.check()
	}
	// Nothing new: every parked key ends by its bound, and then no
	// re-check is due.
	time.Sleep(DefaultExpectationTimeout + 2*shownRecheck)
	synctest.Wait()
	s.check()
	require.False(s.t, recheckDue(s.e), "nothing is parked: no re-check is due")
	s.e.stop()
}
