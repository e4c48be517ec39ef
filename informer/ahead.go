package informer

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// prefetcher is a handler whose calls cost mostly work that other
// goroutines can do ahead of them: the compact store's decodingHandler,
// whose calls decode. prefetch does for p what delivering p will (it
// decodes into the shared cache), skips what another goroutine is doing
// already, and is safe to call concurrently with the handler's calls.
type prefetcher[T any] interface {
	prefetch(p pending[T])
}

const (
	// aheadBatch is how many changes a helper takes from the queue at
	// once.
	aheadBatch = 16
	// aheadReach bounds, per goroutine taking part (the handler's and each
	// helper's), how far into the queue the helpers work: what they
	// decode ahead stays well within the decode cache's least size, and
	// few of the changes they take are superseded before their call.
	aheadReach = 64
	// aheadBacklog is the backlog that starts the helpers; below it they
	// stop.
	aheadBacklog = 4
	// maxAheadHelpers bounds the helpers of one handler.
	maxAheadHelpers = 3
)

// ahead does a prefetcher's work ahead of its calls while it has a
// backlog, so that one handler's decoding uses more than one core. The
// changes are shared out by their queue sequence number: with n helpers,
// helper j (1..n) prefetches the changes whose seq is j modulo n+1, up to
// aheadReach×(n+1) changes into the queue; the others are left to the
// handler, which decodes them when it calls for them while the helpers do
// theirs. So the handler and a helper rarely want the same change at the
// same time (when they do, the later one waits for the decode in
// progress or skips it), no change is decoded twice unless it changes
// again before its call (a coalesced update brings a new version), and a
// handler without a backlog starts nothing.
//
// The helpers are goroutines of the handler's run, started when its
// backlog reaches aheadBacklog and ending when it falls below that (or
// ctx ends); a helper that is as far ahead as it may go waits for the
// handler's next call. wait returns once none is left.
type ahead[T any] struct {
	q       *handlerQueue[T]
	p       prefetcher[T]
	ctx     context.Context
	running atomic.Int32 // helpers alive
	// moved[j-1] wakes helper j after the handler took a change.
	moved []chan struct{}
	// done[j-1] is the last seq helper j prefetched, kept for the next
	// helper j (only one runs at a time).
	done []uint64
	wg   sync.WaitGroup
}

// newAhead returns q's work ahead, or nil when its handler does nothing
// ahead or the process has one core.
func newAhead[T any](ctx context.Context, q *handlerQueue[T]) *ahead[T] {
	p, ok := q.h.(prefetcher[T])
	helpers := min(runtime.GOMAXPROCS(0)-1, maxAheadHelpers)
	if !ok || helpers < 1 {
		return nil
	}
	a := &ahead[T]{q: q, p: p, ctx: ctx, moved: make([]chan struct{}, helpers), done: make([]uint64, helpers)}
	for j := range a.moved {
		a.moved[j] = make(chan struct{}, 1)
	}
	return a
}

// took is called by the handler's goroutine after it took a change: it
// wakes the helpers, or starts them when none runs and the backlog is
// large enough.
func (a *ahead[T]) took() {
	if a == nil {
		return
	}
	for _, ch := range a.moved {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	if a.running.Load() != 0 || a.q.backlog.Load() < aheadBacklog {
		return
	}
	a.running.Store(int32(len(a.moved)))
	a.wg.Add(len(a.moved))
	for j := range a.moved {
		go a.help(j + 1)
	}
}

// help prefetches helper j's share of the queue until the backlog falls
// below aheadBacklog or ctx ends.
func (a *ahead[T]) help(j int) {
	defer a.wg.Done()
	defer a.running.Add(-1)
	share := uint64(len(a.moved) + 1)
	reach := aheadReach * int(share)
	done := &a.done[j-1]
	batch := make([]pending[T], 0, aheadBatch)
	for a.ctx.Err() == nil {
		batch = a.q.peekShare(batch[:0], *done, uint64(j), share, reach)
		if len(batch) == 0 {
			if a.q.backlog.Load() < aheadBacklog {
				return
			}
			select {
			case <-a.moved[j-1]:
			case <-a.ctx.Done():
			}
			continue
		}
		for _, p := range batch {
			a.p.prefetch(p)
			*done = p.seq
		}
		clear(batch) // keep no version alive
	}
}

// wait returns once no helper is left; ctx must have ended or the
// backlog fallen.
func (a *ahead[T]) wait() {
	if a != nil {
		a.wg.Wait()
	}
}

// peekShare appends to dst copies of the pending changes, in delivery
// order, whose seq is after done and j modulo share, among the first
// reach changes of the queue: at most cap(dst) of them.
func (q *handlerQueue[T]) peekShare(dst []pending[T], done, j, share uint64, reach int) []pending[T] {
	q.mu.Lock()
	defer q.mu.Unlock()
	end := min(len(q.fifo), q.head+reach)
	for i := q.head; i < end && len(dst) < cap(dst); i++ {
		e := q.fifo[i]
		if e.seq <= done || e.seq%share != j {
			continue
		}
		if p, ok := q.items[e.key]; ok && p.seq == e.seq {
			dst = append(dst, *p)
		}
	}
	return dst
}
