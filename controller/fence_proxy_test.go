package controller_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/shard"
)

// Interleavings a second reader of issue 23's claim built; each test
// failed on the code before its fix.

// A write a proxy forwarded and then answered 503 itself (its upstream
// connection reset after it forwarded the request: Envoy's "upstream
// reset before headers", the aggregator's "error trying to reach
// service") has an unknown outcome exactly as one whose connection
// broke: the server has it and may apply it. kube.OutcomeUnknown knew
// only 500 and 504, so the fence counted the 503 a known outcome, ended
// the hold without a cut, and the key was drained at once. a alone owns
// every key; its write for k (which b will own) is answered 503 by the
// proxy and reaches the server within the margin; b joins, passes the
// barrier within seconds and reconciles k; a's write lands on b's key.
// Default timings.
func TestShardHandoverWaitsTheMarginAfterAProxy503(t *testing.T) {
	testHandoverAfterAProxyAnswer(t, http.StatusServiceUnavailable)
}

// The same with a 502 Bad Gateway, the answer of most L7 proxies when
// their upstream fails after they forwarded the request.
func TestShardHandoverWaitsTheMarginAfterAProxy502(t *testing.T) {
	testHandoverAfterAProxyAnswer(t, http.StatusBadGateway)
}

func testHandoverAfterAProxyAnswer(t *testing.T, code int) {
	synctest.Test(t, func(t *testing.T) {
		c := newFenceCluster(t)
		names := []string{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4", "cm-5"}
		c.seed(names...)
		two := shard.NewRing([]string{"a", "b"}, shard.DefaultVirtualNodes)
		key := ownedBy(t, two, "b", names...)
		var late atomic.Pointer[controller.Key]
		p := c.start(replica{name: "a", sharded: true, late: &late}).proxy
		time.Sleep(15 * time.Second) // the ring {a} settles: a owns every key
		require.True(t, c.h.reconciledBy("a", key.String()))

		held, gate := make(chan struct{}), make(chan struct{})
		p.answer.Store(proxyOnce(code, key, "late", held, gate))
		late.Store(&key)
		_, err := c.srv.Patch("configmaps", "demo", key.Name, []byte(`{"data":{"v":"1"}}`))
		require.NoError(t, err)
		<-held // a's late write was forwarded; a got the proxy's answer
		synctest.Wait()
		answeredAt := time.Now()

		c.start(replica{name: "b", sharded: true})
		c.deliverWithinTheMargin("b", key, answeredAt, gate, nil)
		require.Empty(t, c.h.staleWrites(false), "a's write the proxy answered %d landed after b started on the key", code)
		require.Empty(t, c.h.overlaps())
	})
}

// The leader's side of the same hole: a's write is forwarded by the
// proxy and answered 502; a steps down at once. Its term has no cut, so
// the elector releases without waiting the margin; b acquires within a
// retry period and reconciles; a's write lands while the Lease names b.
// Default timings.
func TestLeaderReleaseWaitsTheMarginAfterAProxy502(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFenceCluster(t)
		c.election = "managers"
		c.seed("cm")
		key := controller.Key{Namespace: "demo", Name: "cm"}
		a := c.start(replica{name: "a"})
		p := a.proxy
		for !c.h.reconciledBy("a", key.String()) {
			time.Sleep(100 * time.Millisecond)
		}
		c.start(replica{name: "b"})
		time.Sleep(5 * time.Second) // b is a candidate

		held, gate := make(chan struct{}), make(chan struct{})
		p.answer.Store(proxyOnce(http.StatusBadGateway, key, "a", held, gate))
		_, err := c.srv.Patch("configmaps", "demo", key.Name, []byte(`{"data":{"v":"1"}}`))
		require.NoError(t, err)
		<-held // a's write was forwarded; a got the proxy's 502
		synctest.Wait()
		answeredAt := time.Now()

		stopped := make(chan error, 1)
		go func() { stopped <- a.stop() }()
		c.deliverWithinTheMargin("b", key, answeredAt, gate, stopped)
		require.Empty(t, c.h.staleWrites(true), "a's write the proxy answered 502 landed after b took over")
		require.Empty(t, c.h.overlaps())
	})
}

// A process restarted with the identity of one that died with a write
// on its way (a StatefulSet pod's name as the identity) must not take
// the dead one's keys before that write lands. With a new identity the
// others give that write LeaseDuration (they judge the dead member by
// its Lease); with the same one, before the fix, the new process renewed
// the dead one's Lease at its first round and reconciled its keys a
// barrier later. Now it passes no barrier until the margin after it
// first saw the Lease. Here a's write for its key k loses its answer
// (the server gets it within the margin), a dies (cut off from the
// server for good), and a2 starts with identity "a". Default timings.
func TestShardRestartWithTheSameIdentityWaitsTheMargin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFenceCluster(t)
		names := []string{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4", "cm-5"}
		c.seed(names...)
		var late atomic.Pointer[controller.Key]
		a := c.start(replica{name: "a", sharded: true, late: &late})
		c.start(replica{name: "b", sharded: true})
		time.Sleep(15 * time.Second) // the ring {a, b} settles
		ring := a.mgr.Shard().Ring()
		key := ownedBy(t, ring, "a", names...)

		lostAt, gate := c.loseLateWrite(a, &late, key)
		a.link.partition() // a dies: nothing more of it reaches the server

		c.start(replica{name: "a2", identity: "a", sharded: true})
		c.deliverWithinTheMargin("a2", key, lostAt, gate, nil)
		require.Empty(t, c.h.staleWrites(false), "the dead process's write landed after its successor started on the key")
	})
}
