package controller_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/leader"
	"github.com/kwatch/kwatch/shard"
)

// A shard member's write that is on its way to the server when the
// member leaves the ring (its term ends, its Lease is released) gets
// the margin LeaseDuration - RenewDeadline, as it does when a term
// lapses: the member waits that long after its term ended before it
// releases, so no other member takes the key over before then. Here
// a's write leaves (the key is a's, the term holds) and is delayed on
// the way; a stops; the write reaches the server once b has started
// reconciling the key, or just within the margin, whichever is first.
// It must reach the server before b starts on the key. Before the fix a
// released at once, b took the key over within a barrier, and the
// delayed write landed on b's key. Default timings.
func TestShardWriteOnItsWayAtReleaseGetsTheMargin(t *testing.T) {
	testWriteOnItsWayAtRelease(t, 0, false)
}

// The same when the write's answer is lost while the term holds (a
// broken connection, the write still on its way to the server): its
// hold ends at once, with the term alive and no deadline passed, so
// before the fix neither a term cut nor a deadline cut was recorded and
// the release did not wait (found by a second reader). The write's
// outcome is unknown, so it is a cut.
func TestShardWriteWithALostAnswerGetsTheMarginAtRelease(t *testing.T) {
	testWriteOnItsWayAtRelease(t, 0, true)
}

// The same when the write is cut off by its own deadline before a stops
// (the drain's timeout does the same to a reconcile): the hold ends with
// the write still on its way, so no term cut is recorded; the release
// must wait the margin all the same (it did not: found by a second
// reader).
func TestShardWriteCutOffByItsDeadlineGetsTheMargin(t *testing.T) {
	testWriteOnItsWayAtRelease(t, time.Second, false)
}

// testWriteOnItsWayAtRelease: a's late write is delayed on its way to
// the server (lost: its answer is lost at once, the server gets it
// later) while a leaves the ring.
func testWriteOnItsWayAtRelease(t *testing.T, cutOff time.Duration, lost bool) {
	synctest.Test(t, func(t *testing.T) {
		c := newFenceCluster(t)
		c.seed("cm-0", "cm-1", "cm-2", "cm-3")
		var late atomic.Pointer[controller.Key]
		a := c.start(replica{name: "a", sharded: true, late: &late, cutOff: cutOff})
		b := c.start(replica{name: "b", sharded: true})
		time.Sleep(15 * time.Second) // the ring {a, b} settles
		ring := a.mgr.Shard().Ring()
		key := ownedBy(t, ring, "a", "cm-0", "cm-1", "cm-2", "cm-3")

		held, gate := make(chan struct{}), make(chan struct{})
		a.link.mu.Lock()
		if lost {
			a.link.lose = loseOnce(key, "late", held, gate)
		} else {
			a.link.hold = func(r *http.Request) {
				if isWriteOf(r, key, "late") {
					close(held)
					<-gate
				}
			}
		}
		a.link.mu.Unlock()
		late.Store(&key)
		_, err := c.srv.Patch("configmaps", "demo", key.Name, []byte(`{"data":{"v":"1"}}`))
		require.NoError(t, err)
		<-held // a's late write is on its way
		synctest.Wait()
		if cutOff > 0 {
			time.Sleep(2 * cutOff) // its deadline has passed: a's client gave up on it
			synctest.Wait()
		}

		stopped := make(chan error, 1)
		go func() { stopped <- a.stop() }()
		c.deliverWithinTheMargin("b", key, time.Now(), gate, stopped)
		require.Empty(t, c.h.staleWrites(false), "a's delayed write landed after b started on the key")
		require.Empty(t, c.h.overlaps())
		_ = b
	})
}

// deliverWithinTheMargin lets a's delayed write reach the server (closes
// gate) once next has started reconciling key, or just within the margin
// after since, whichever is first; then it waits for a's stop (when
// stopped is not nil) and for next to take key over. The caller then
// checks that the write arrived before next started on the key.
func (c *fenceCluster) deliverWithinTheMargin(next string, key controller.Key, since time.Time, gate chan struct{}, stopped <-chan error) {
	t := c.t
	t.Helper()
	margin := leader.DefaultLeaseDuration - leader.DefaultRenewDeadline
	for !c.h.reconciledBy(next, key.String()) && time.Since(since) < margin-500*time.Millisecond {
		time.Sleep(100 * time.Millisecond)
	}
	close(gate) // the write reaches the server
	if stopped != nil {
		require.NoError(t, <-stopped)
	}
	for !c.h.reconciledBy(next, key.String()) {
		require.Less(t, time.Since(since), time.Minute, "%s never took the key over", next)
		time.Sleep(100 * time.Millisecond)
	}
	synctest.Wait()
}

// loseLateWrite makes a's late write of key (replica.late) lose its
// answer, the server getting it once the returned gate is closed, and
// starts it: it changes the object so that a reconciles key. It returns
// once a has seen no answer, with the time then.
func (c *fenceCluster) loseLateWrite(a *electedReplica, late *atomic.Pointer[controller.Key], key controller.Key) (time.Time, chan struct{}) {
	t := c.t
	t.Helper()
	held, gate := make(chan struct{}), make(chan struct{})
	a.link.mu.Lock()
	a.link.lose = loseOnce(key, "late", held, gate)
	a.link.mu.Unlock()
	late.Store(&key)
	_, err := c.srv.Patch("configmaps", "demo", key.Name, []byte(`{"data":{"v":"1"}}`))
	require.NoError(t, err)
	<-held
	synctest.Wait()
	return time.Now(), gate
}

// ownedBy is a key of the ConfigMaps names that ring gives to owner.
func ownedBy(t *testing.T, ring *shard.Ring, owner string, names ...string) controller.Key {
	t.Helper()
	for _, n := range names {
		if ring.Owner("demo/"+n) == owner {
			return controller.Key{Namespace: "demo", Name: n}
		}
	}
	require.FailNow(t, "no key for "+owner)
	return controller.Key{}
}

// isWriteOf reports whether r is a PATCH of key whose body holds
// "mark"; it leaves r's body readable.
func isWriteOf(r *http.Request, key controller.Key, mark string) bool {
	if r.Method != http.MethodPatch || !strings.HasSuffix(r.URL.Path, "/"+key.Name) {
		return false
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return bytes.Contains(body, []byte(`"`+mark+`"`))
}

// loseOnce is a fenceLink.lose that loses the answer of the first write
// of key marked mark (closing held), delivering it once gate is closed.
func loseOnce(key controller.Key, mark string, held, gate chan struct{}) func(*http.Request) <-chan struct{} {
	var once atomic.Bool
	return func(r *http.Request) <-chan struct{} {
		if !isWriteOf(r, key, mark) || !once.CompareAndSwap(false, true) {
			return nil
		}
		close(held)
		return gate
	}
}

// A key handed over at a ring change must not reach its new owner while
// a write of the old owner's with an unknown outcome may still land on
// it. a alone owns every key; its write for k (which b will own) loses
// its answer, the server getting it later; b joins. Before the fix a's
// hold of k ended with the error, k counted as drained at once, a
// published the new ring, b passed the barrier and reconciled k within
// seconds, and a's write landed on b's key (found by a second reader).
// Now k stays landing on a until the margin after the lost answer.
// Default timings.
func TestShardHandoverWaitsTheMarginAfterAWriteWithALostAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFenceCluster(t)
		names := []string{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4", "cm-5"}
		c.seed(names...)
		two := shard.NewRing([]string{"a", "b"}, shard.DefaultVirtualNodes)
		key := ownedBy(t, two, "b", names...)
		var late atomic.Pointer[controller.Key]
		a := c.start(replica{name: "a", sharded: true, late: &late})
		time.Sleep(15 * time.Second) // the ring {a} settles: a owns every key
		require.True(t, c.h.reconciledBy("a", key.String()))

		lostAt, gate := c.loseLateWrite(a, &late, key)

		c.start(replica{name: "b", sharded: true})
		c.deliverWithinTheMargin("b", key, lostAt, gate, nil)
		require.Empty(t, c.h.staleWrites(false), "a's write with a lost answer landed after b started on the key")
		require.Empty(t, c.h.overlaps())
	})
}

// A leader's write whose answer was lost while it led, the write still
// on its way to the server, gets the margin when the leader then steps
// down: the elector waits LeaseDuration - RenewDeadline after the lost
// answer before it releases the Lease. Before the fix it released at
// once, b acquired within a retry period and reconciled the key, and
// a's write landed while the Lease named b (found by a second reader).
// Default timings.
func TestLeaderReleaseWaitsTheMarginAfterAWriteWithALostAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFenceCluster(t)
		c.election = "managers"
		c.seed("cm")
		key := controller.Key{Namespace: "demo", Name: "cm"}
		a := c.start(replica{name: "a"})
		for !c.h.reconciledBy("a", key.String()) {
			time.Sleep(100 * time.Millisecond)
		}
		c.start(replica{name: "b"})
		time.Sleep(5 * time.Second) // b is a candidate

		held, gate := make(chan struct{}), make(chan struct{})
		a.link.mu.Lock()
		a.link.lose = loseOnce(key, "a", held, gate)
		a.link.mu.Unlock()
		_, err := c.srv.Patch("configmaps", "demo", key.Name, []byte(`{"data":{"v":"1"}}`))
		require.NoError(t, err)
		<-held // a's write is on its way; a saw no answer
		synctest.Wait()
		lostAt := time.Now()

		stopped := make(chan error, 1)
		go func() { stopped <- a.stop() }()
		c.deliverWithinTheMargin("b", key, lostAt, gate, stopped)
		require.Empty(t, c.h.staleWrites(true), "a's write with a lost answer landed after b took over")
		require.Empty(t, c.h.overlaps())
	})
}
