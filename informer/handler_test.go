package informer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

type obj struct{ name, rv string }

// recorder is a Handler that logs calls as strings.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) OnAdd(o *obj, initial bool) {
	r.log(fmt.Sprintf("add %s@%s initial=%v", o.name, o.rv, initial))
}
func (r *recorder) OnUpdate(old, new *obj) {
	r.log(fmt.Sprintf("update %s@%s->%s", new.name, old.rv, new.rv))
}
func (r *recorder) OnDelete(o *obj, unknown bool) {
	r.log(fmt.Sprintf("delete %s@%s unknown=%v", o.name, o.rv, unknown))
}
func (r *recorder) log(s string) {
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
}

func drain(q *handlerQueue[*obj]) {
	for {
		p, ok := q.pop()
		if !ok {
			return
		}
		deliver(q.h, p, q.log, &q.panics)
	}
}

func TestHandlerQueueCoalesces(t *testing.T) {
	o := func(name, rv string) *obj { return &obj{name, rv} }
	tests := []struct {
		name string
		ops  func(q *handlerQueue[*obj])
		want []string
	}{
		{"add then updates deliver one add of the newest", func(q *handlerQueue[*obj]) {
			q.add("a", o("a", "1"), true)
			q.update("a", o("a", "1"), o("a", "2"))
			q.update("a", o("a", "2"), o("a", "3"))
		}, []string{"add a@3 initial=true"}},
		{"updates coalesce from the first old to the newest", func(q *handlerQueue[*obj]) {
			q.update("a", o("a", "1"), o("a", "2"))
			q.update("a", o("a", "2"), o("a", "3"))
		}, []string{"update a@1->3"}},
		{"add then delete leaves nothing", func(q *handlerQueue[*obj]) {
			q.add("a", o("a", "1"), false)
			q.remove("a", o("a", "0"), o("a", "2"), false)
		}, nil},
		{"update then delete delivers the delete with the final state", func(q *handlerQueue[*obj]) {
			q.update("a", o("a", "1"), o("a", "2"))
			q.remove("a", o("a", "0"), o("a", "3"), true)
		}, []string{"delete a@3 unknown=true"}},
		{"delete then re-create is an update from the state the handler saw", func(q *handlerQueue[*obj]) {
			q.remove("a", o("a", "0"), o("a", "1"), false)
			q.add("a", o("a", "5"), false)
		}, []string{"update a@0->5"}},
		{"keys keep first-arrival order", func(q *handlerQueue[*obj]) {
			q.add("a", o("a", "1"), false)
			q.add("b", o("b", "2"), false)
			q.update("a", o("a", "1"), o("a", "3"))
		}, []string{"add a@3 initial=false", "add b@2 initial=false"}},
		{"resync is skipped when real work is pending", func(q *handlerQueue[*obj]) {
			q.update("a", o("a", "1"), o("a", "2"))
			q.resyncObj("a", o("a", "2"))
			q.resyncObj("b", o("b", "7"))
		}, []string{"update a@1->2", "update b@7->7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			q := newHandlerQueue[*obj](rec, true, slog.Default())
			tt.ops(q)
			drain(q)
			require.Equal(t, tt.want, rec.calls)
		})
	}
}

func TestHandlerQueueBoundedByKeys(t *testing.T) {
	q := newHandlerQueue[*obj](&recorder{}, false, slog.Default())
	// A stalled handler while 100,000 changes stream over 100 keys, plus
	// 10,000 short-lived objects created and deleted.
	for i := 0; i < 100000; i++ {
		k := fmt.Sprintf("k%d", i%100)
		q.update(k, &obj{k, "0"}, &obj{k, fmt.Sprint(i)})
		if i%10 == 0 {
			tmp := fmt.Sprintf("tmp%d", i)
			q.add(tmp, &obj{tmp, "1"}, false)
			q.remove(tmp, &obj{tmp, "1"}, &obj{tmp, "2"}, false)
		}
	}
	q.mu.Lock()
	items, fifo := len(q.items), len(q.fifo)-q.head
	q.mu.Unlock()
	require.Equal(t, 100, items, "pending keys")
	require.LessOrEqual(t, fifo, 2*100+64+1, "fifo entries, stale ones included")
	require.EqualValues(t, 100, q.backlog.Load())
}

func TestHandlerPanicIsContained(t *testing.T) {
	calls := 0
	h := HandlerFuncs[*obj]{AddFunc: func(o *obj, _ bool) {
		calls++
		if o.name == "bad" {
			panic("boom")
		}
	}}
	q := newHandlerQueue[*obj](h, false, slog.New(slog.DiscardHandler))
	q.add("bad", &obj{"bad", "1"}, false)
	q.add("good", &obj{"good", "1"}, false)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { q.run(ctx); close(done) }()
	require.Eventually(t, func() bool { return q.panics.Load() == 1 && q.backlog.Load() == 0 }, waitLong, tick)
	cancel()
	<-done
	require.Equal(t, 2, calls)
}

// Once the initial list's burst is delivered, the queue does not keep the
// burst's storage; it still delivers in order after it.
func TestHandlerQueueReleasesABurst(t *testing.T) {
	rec := &recorder{}
	q := newHandlerQueue[*obj](rec, false, slog.Default())
	for i := range 10000 {
		k := fmt.Sprintf("k%d", i)
		q.add(k, &obj{k, "1"}, true)
	}
	drain(q)
	require.Len(t, rec.calls, 10000)
	q.mu.Lock()
	fifo := cap(q.fifo)
	q.mu.Unlock()
	require.Zero(t, fifo, "the drained burst's FIFO is released")

	rec.calls = nil
	q.add("b", &obj{"b", "2"}, false)
	q.add("a", &obj{"a", "3"}, false)
	drain(q)
	require.Equal(t, []string{"add b@2 initial=false", "add a@3 initial=false"}, rec.calls)
	q.mu.Lock()
	defer q.mu.Unlock()
	require.NotZero(t, cap(q.fifo), "a small backlog keeps its FIFO")
}
