package informer

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/testutil"
)

func drainOrdered(q *orderedQueue[*obj]) {
	for {
		p, fromOver, ok := q.pop()
		if !ok {
			return
		}
		deliver(q.h, p, q.log, &q.panics)
		q.delivered(fromOver)
	}
}

func TestOrderedQueueDeliversEveryChange(t *testing.T) {
	o := func(name, rv string) *obj { return &obj{name, rv} }
	tests := []struct {
		name string
		ops  func(q *orderedQueue[*obj])
		want []string
	}{
		{"add, updates and delete each get a call", func(q *orderedQueue[*obj]) {
			q.add("a", o("a", "1"), false)
			q.update("a", o("a", "1"), o("a", "2"))
			q.update("a", o("a", "2"), o("a", "3"))
			q.remove("a", o("a", "3"), o("a", "4"), false)
		}, []string{"add a@1 initial=false", "update a@1->2", "update a@2->3", "delete a@4 unknown=false"}},
		{"an add and its delete are both delivered", func(q *orderedQueue[*obj]) {
			q.add("a", o("a", "1"), false)
			q.remove("a", o("a", "1"), o("a", "2"), false)
		}, []string{"add a@1 initial=false", "delete a@2 unknown=false"}},
		{"keys interleave in arrival order", func(q *orderedQueue[*obj]) {
			q.add("a", o("a", "1"), true)
			q.add("b", o("b", "2"), true)
			q.update("a", o("a", "1"), o("a", "3"))
			q.remove("b", o("b", "2"), o("b", "2"), true)
		}, []string{"add a@1 initial=true", "add b@2 initial=true", "update a@1->3", "delete b@2 unknown=true"}},
		{"resync is one more call", func(q *orderedQueue[*obj]) {
			q.update("a", o("a", "1"), o("a", "2"))
			q.resyncObj("a", o("a", "2"))
		}, []string{"update a@1->2", "update a@2->2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			q := newOrderedQueue[*obj](rec, true, 0, slog.Default())
			tt.ops(q)
			drainOrdered(q)
			require.Equal(t, tt.want, rec.calls)
			require.Zero(t, q.counts().merged, "merged")
		})
	}
}

// TestOrderedQueueOverflowCoalesces fills a queue of 3 and goes on: the
// first 3 changes come in order, the rest coalesce per key (counted in
// merged), and once caught up the queue is ordered again.
func TestOrderedQueueOverflowCoalesces(t *testing.T) {
	o := func(name string, rv int) *obj { return &obj{name, strconv.Itoa(rv)} }
	rec := &recorder{}
	q := newOrderedQueue[*obj](rec, false, 3, slog.Default())
	q.add("a", o("a", 1), false)
	q.add("b", o("b", 2), false)
	q.update("a", o("a", 1), o("a", 3))
	// Full: these 5 changes become 2 calls.
	q.update("a", o("a", 3), o("a", 4))
	q.update("b", o("b", 2), o("b", 5))
	q.update("a", o("a", 4), o("a", 6))
	q.add("c", o("c", 7), false)
	q.remove("c", o("c", 7), o("c", 8), false)
	require.EqualValues(t, 3+2, q.counts().backlog, "3 in order, 2 keys coalesced")
	q.mu.Lock()
	require.Len(t, q.buf[q.head:], 3, "the buffer holds its limit")
	q.mu.Unlock()
	drainOrdered(q)
	require.Equal(t, []string{"add a@1 initial=false", "add b@2 initial=false", "update a@1->3",
		"update a@3->6", "update b@2->5"}, rec.calls)
	require.EqualValues(t, 3, q.counts().merged, "a@4 folded into a@6; c added and deleted")

	rec.calls = nil
	q.update("a", o("a", 6), o("a", 9))
	q.update("a", o("a", 9), o("a", 10))
	drainOrdered(q)
	require.Equal(t, []string{"update a@6->9", "update a@9->10"}, rec.calls, "ordered again after catching up")
	require.EqualValues(t, 3, q.counts().merged)
}

func TestOrderedQueueSync(t *testing.T) {
	rec := &recorder{}
	q := newOrderedQueue[*obj](rec, false, 2, slog.Default())
	q.add("a", &obj{"a", "1"}, true)
	q.add("b", &obj{"b", "1"}, true)
	q.add("c", &obj{"c", "1"}, true) // overflow
	q.markSynced()
	q.add("d", &obj{"d", "2"}, false)
	require.False(t, q.hasSynced())
	for range 3 {
		p, fromOver, ok := q.pop()
		require.True(t, ok)
		require.False(t, q.hasSynced(), "synced before %s was delivered", p.key)
		deliver(q.h, p, q.log, &q.panics)
		q.delivered(fromOver)
	}
	require.True(t, q.hasSynced(), "every initial object delivered; d is live")
}

// orderedRecorder records every call, and can be held blocked: a printer
// behind a paused terminal.
type orderedRecorder struct {
	recorderT
	gate chan struct{} // each call waits for it to be closed; nil never waits
}

func (r *orderedRecorder) wait() {
	if r.gate != nil {
		<-r.gate
	}
}
func (r *orderedRecorder) OnAdd(p *testPod, initial bool) { r.wait(); r.recorderT.OnAdd(p, initial) }
func (r *orderedRecorder) OnUpdate(old, p *testPod)       { r.wait(); r.recorderT.OnUpdate(old, p) }
func (r *orderedRecorder) OnDelete(p *testPod, u bool)    { r.wait(); r.recorderT.OnDelete(p, u) }

// TestOrderedHandlerGetsEveryEvent runs an informer against the simulator
// under synctest: one Ordered handler is held blocked while pods are
// created, changed (a deletionTimestamp set) and deleted, as a paused
// terminal would hold the printer; once released it has every event in the
// server's order, while a Coalesce handler held the same way gets fewer
// calls and counts the difference in Merged.
func TestOrderedHandlerGetsEveryEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &testutil.MemNet{}
		m := startMemSim(t, n, "api:80", sim.Options{})
		inf, err := New(memOptions(t, n, "api:80"))
		require.NoError(t, err)
		gate := make(chan struct{})
		release := sync.OnceFunc(func() { close(gate) })
		defer release() // a failed check must not leave the handlers blocked
		ordered := &orderedRecorder{gate: gate}
		oreg, err := inf.AddHandler(ordered, HandlerOptions{Delivery: Ordered})
		require.NoError(t, err)
		coalesced := &orderedRecorder{gate: gate}
		creg, err := inf.AddHandler(coalesced, HandlerOptions{})
		require.NoError(t, err)
		start(t, inf)
		require.True(t, inf.WaitForSync(t.Context()))

		var want []string
		for i := range 20 {
			name := fmt.Sprintf("p-%d", i)
			rv, err := m.Server.PutPod(sim.Pod{Namespace: "ns", Name: name})
			require.NoError(t, err)
			want = append(want, fmt.Sprintf("add ns/%s@%d", name, rv))
			prev := rv
			rv, err = m.Server.PutPod(sim.Pod{Namespace: "ns", Name: name, Restarts: 1})
			require.NoError(t, err)
			want = append(want, fmt.Sprintf("update ns/%s@%d->%d", name, prev, rv))
			drv, err := m.Server.Delete("pods", "ns", name)
			require.NoError(t, err)
			want = append(want, fmt.Sprintf("delete ns/%s@%d", name, drv))
		}
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, len(want)-1, oreg.Backlog(), "every event but the one in delivery waits in the ordered queue")
		release()
		synctest.Wait()
		require.Equal(t, want, ordered.get(), "every event, in the server's order")
		require.Zero(t, oreg.Merged())
		require.Less(t, len(coalesced.get()), len(want), "the coalescing handler got fewer calls")
		require.EqualValues(t, len(want)-len(coalesced.get()), creg.Merged(), "and counted the rest")
	})
}

// TestOrderedHandlerOverflow holds an Ordered handler with a buffer of 5
// blocked while 20 changes are made to 4 pods: it gets the first changes in order,
// then one call per object for the rest, counts the merged ones, and its
// calls still replay to the server's state.
func TestOrderedHandlerOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &testutil.MemNet{}
		m := startMemSim(t, n, "api:80", sim.Options{})
		inf, err := New(memOptions(t, n, "api:80"))
		require.NoError(t, err)
		gate := make(chan struct{})
		release := sync.OnceFunc(func() { close(gate) })
		defer release()
		rec := &orderedRecorder{gate: gate}
		rep := newReplayer()
		reg, err := inf.AddHandler(HandlerFuncs[*testPod]{
			AddFunc:    func(p *testPod, i bool) { rec.OnAdd(p, i); rep.OnAdd(p, i) },
			UpdateFunc: func(o, p *testPod) { rec.OnUpdate(o, p); rep.OnUpdate(o, p) },
			DeleteFunc: func(p *testPod, u bool) { rec.OnDelete(p, u); rep.OnDelete(p, u) },
		}, HandlerOptions{Delivery: Ordered, Buffer: 5})
		require.NoError(t, err)
		start(t, inf)
		require.True(t, inf.WaitForSync(t.Context()))
		var first []string
		for i := range 20 {
			name := fmt.Sprintf("p-%d", i%4)
			var rv uint64
			if i < 4 {
				rv, err = m.Server.PutPod(sim.Pod{Namespace: "ns", Name: name})
			} else {
				rv, err = m.Server.PutPod(sim.Pod{Namespace: "ns", Name: name, Restarts: int32(i)})
			}
			require.NoError(t, err)
			if i < 4 { // the adds: within the one in delivery and the five buffered
				first = append(first, fmt.Sprintf("add ns/%s@%d", name, rv))
			}
		}
		time.Sleep(time.Second)
		synctest.Wait()
		require.LessOrEqual(t, reg.Backlog(), 5+4, "the buffer, then one pending change per object")
		release()
		synctest.Wait()
		calls := rec.get()
		require.Equal(t, first, calls[:4], "the first changes in order")
		require.Less(t, len(calls), 20, "the overflow coalesced")
		require.EqualValues(t, 20-len(calls), reg.Merged(), "every change is a call or counted as merged")
		require.EqualValues(t, 20-len(calls), inf.Stats().HandlerMerged)
		got, violations := rep.snapshot()
		require.Empty(t, violations)
		require.Equal(t, serverState(t, m.Server), got, "the calls replay to the server's state")
	})
}

// BenchmarkDelivery pushes changes through each delivery queue and drains
// them, as the informer's apply and a handler's goroutine do: the per-change
// cost of ordered delivery against coalescing.
func BenchmarkDelivery(b *testing.B) {
	objs := make([]*obj, 1000)
	for i := range objs {
		objs[i] = &obj{strconv.Itoa(i), "1"}
	}
	h := HandlerFuncs[*obj]{}
	for _, tc := range []struct {
		name string
		q    func() delivery[*obj]
	}{
		{"coalesce", func() delivery[*obj] { return newHandlerQueue[*obj](h, false, slog.Default()) }},
		{"ordered", func() delivery[*obj] { return newOrderedQueue[*obj](h, false, 0, slog.Default()) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			q := tc.q()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { q.run(ctx); close(done) }()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				o := objs[i%len(objs)]
				q.update(o.name, o, o)
				i++
			}
			cancel()
			<-done
		})
	}
}

// TestOrderedQueueAddAllIsEachAdd: addAll delivers what an add of each
// key in turn delivers, also past the buffer's limit (the rest coalesce
// behind it) and over more keys than one batch.
func TestOrderedQueueAddAllIsEachAdd(t *testing.T) {
	for _, limit := range []int{3, 0} {
		keys := make([]string, 2*addBatch+7)
		objs := make([]*obj, len(keys))
		for i := range keys {
			keys[i] = fmt.Sprint("k", i%(addBatch+5)) // some keys twice
			objs[i] = &obj{keys[i], strconv.Itoa(i)}
		}
		each, all := &recorder{}, &recorder{}
		qe := newOrderedQueue[*obj](each, false, limit, slog.Default())
		qa := newOrderedQueue[*obj](all, false, limit, slog.Default())
		qe.update("k1", &obj{"k1", "a"}, &obj{"k1", "b"}) // something before
		qa.update("k1", &obj{"k1", "a"}, &obj{"k1", "b"})
		for i := range keys {
			qe.add(keys[i], objs[i], true)
		}
		qa.addAll(keys, objs, true)
		require.Equal(t, qe.counts(), qa.counts(), "limit %d", limit)
		drainOrdered(qe)
		drainOrdered(qa)
		require.Equal(t, each.calls, all.calls, "limit %d", limit)
		require.Equal(t, qe.counts(), qa.counts(), "limit %d", limit)
	}
}

// BenchmarkAddAll queues a first list of 100,000 objects into an empty
// coalescing queue, as the informer does after its first list or a
// restore, and drains it as the handler's goroutine would: the per-key
// cost of a burst.
func BenchmarkAddAll(b *testing.B) {
	keys := make([]string, 100_000)
	objs := make([]*obj, len(keys))
	for i := range keys {
		keys[i] = "ns/" + strconv.Itoa(i)
		objs[i] = &obj{keys[i], "1"}
	}
	b.ReportAllocs()
	for b.Loop() {
		q := newHandlerQueue[*obj](HandlerFuncs[*obj]{}, false, slog.Default())
		q.addAll(keys, objs, true)
		for {
			if _, ok := q.pop(); !ok {
				break
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/key")
}
