package informer

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// handlerModel is a plain model of handlerQueue: the same coalescing
// rules, on a map and a slice of keys in first-arrival order, with no
// stale entries and no storage to give back.
type handlerModel struct {
	items    map[string]*pending[*obj]
	order    []string
	nextSeq  uint64
	syncSeq  uint64
	synced   bool
	inFlight uint64
	merged   uint64
}

func (m *handlerModel) push(key string) *pending[*obj] {
	m.nextSeq++
	p := &pending[*obj]{key: key, seq: m.nextSeq}
	m.items[key] = p
	m.order = append(m.order, key)
	return p
}

func (m *handlerModel) add(key string, o *obj, initial bool) {
	p, ok := m.items[key]
	if !ok {
		p = m.push(key)
		p.initial = initial
	} else {
		m.merged++
	}
	p.cur, p.curOK, p.resync = o, true, false
}

func (m *handlerModel) update(key string, old, o *obj, relisted bool) {
	p, ok := m.items[key]
	if !ok {
		p = m.push(key)
		p.old, p.oldOK = old, true
	} else {
		m.merged++
	}
	p.cur, p.curOK, p.resync = o, true, false
	p.relisted = p.relisted || relisted
}

func (m *handlerModel) remove(key string, last, final *obj, unknown bool) {
	p, ok := m.items[key]
	switch {
	case !ok:
		p = m.push(key)
		p.old, p.oldOK = last, true
	case !p.oldOK:
		m.merged += 2
		delete(m.items, key)
		m.order = slices.DeleteFunc(m.order, func(k string) bool { return k == key })
		return
	default:
		m.merged++
	}
	p.cur, p.curOK, p.unknown, p.resync = final, false, unknown, false
}

func (m *handlerModel) resyncObj(key string, o *obj) {
	if _, ok := m.items[key]; !ok {
		p := m.push(key)
		p.old, p.oldOK, p.cur, p.curOK, p.resync = o, true, o, true, true
	}
}

func (m *handlerModel) pop() (pending[*obj], bool) {
	if len(m.order) == 0 {
		return pending[*obj]{}, false
	}
	k := m.order[0]
	m.order = m.order[1:]
	p := m.items[k]
	delete(m.items, k)
	m.inFlight = p.seq
	return *p, true
}

func (m *handlerModel) hasSynced() bool {
	if !m.synced || (m.inFlight != 0 && m.inFlight <= m.syncSeq) {
		return false
	}
	return len(m.order) == 0 || m.items[m.order[0]].seq > m.syncSeq
}

// A handler's queue agrees with the model through bursts over far more
// than keptBacklog keys (an initial list, relists that update and delete,
// resyncs) that drain and give the storage back, with the informer's
// traffic and the handler's pops interleaved: the same work popped in the
// same order, the same backlog and merged count, and HasSynced flipping
// at the same step. A drained queue holds no burst's storage.
func TestHandlerQueueBurstsMatchModel(t *testing.T) {
	const keys = 700
	rng := rand.New(rand.NewPCG(21, 22))
	q := newHandlerQueue[*obj](&recorder{}, true, slog.Default())
	m := &handlerModel{items: map[string]*pending[*obj]{}}
	rv := 0
	o := func(k string) *obj { rv++; return &obj{k, fmt.Sprint(rv)} }
	key := func() string { return fmt.Sprint("k", rng.IntN(keys)) }
	step, released := 0, 0

	pop := func() bool {
		want, wok := m.pop()
		got, ok := q.pop()
		require.Equal(t, wok, ok, "step %d: pop", step)
		require.Equal(t, want, got, "step %d: pop", step)
		return ok
	}
	delivered := func() {
		q.delivered()
		m.inFlight = 0
	}
	op := func(kind int) {
		k := key()
		switch kind {
		case 0:
			v := o(k)
			q.add(k, v, false)
			m.add(k, v, false)
		case 1:
			old, v := o(k), o(k)
			q.update(k, old, v)
			m.update(k, old, v, false)
		case 2:
			old, v := o(k), o(k)
			q.relistUpdate(k, old, v)
			m.update(k, old, v, true)
		case 3:
			last, final := o(k), o(k)
			unknown := rng.IntN(2) == 0
			q.remove(k, last, final, unknown)
			m.remove(k, last, final, unknown)
		case 4:
			v := o(k)
			q.resyncObj(k, v)
			m.resyncObj(k, v)
		case 5:
			q.markSynced()
			m.syncSeq, m.synced = m.nextSeq, true
		case 6: // a replay or first list: many keys at once, some twice
			n := rng.IntN(2*addBatch + 3)
			ks, vs := make([]string, n), make([]*obj, n)
			for i := range ks {
				ks[i] = key()
				vs[i] = o(ks[i])
				m.add(ks[i], vs[i], true)
			}
			q.addAll(ks, vs, true)
		}
	}
	wasBig := false
	check := func() {
		t.Helper()
		q.mu.Lock()
		items, fifoCap, live := len(q.items), cap(q.fifo), len(q.fifo)-q.head
		q.mu.Unlock()
		if fifoCap > keptBacklog {
			wasBig = true
		} else if wasBig && fifoCap == 0 {
			released++
			wasBig = false
		}
		require.Equal(t, len(m.items), items, "step %d: pending keys", step)
		require.LessOrEqual(t, live, 2*items+64+1, "step %d: fifo entries", step)
		require.EqualValues(t, len(m.items), q.backlog.Load(), "step %d: backlog", step)
		require.Equal(t, m.merged, q.merged.Load(), "step %d: merged", step)
		require.Equal(t, m.hasSynced(), q.hasSynced(), "step %d: hasSynced", step)
	}

	const rounds = 12
	for round := range rounds {
		// The burst: an initial list (adds), or a relist (updates and
		// deletes), or a resync, over most keys, while the handler pops
		// now and then.
		for _, i := range rng.Perm(keys)[:keys-rng.IntN(keys/4)] {
			step++
			k := fmt.Sprint("k", i)
			switch round % 3 {
			case 0:
				v := o(k)
				q.add(k, v, true)
				m.add(k, v, true)
			case 1:
				if rng.IntN(5) == 0 {
					last, final := o(k), o(k)
					q.remove(k, last, final, true)
					m.remove(k, last, final, true)
				} else {
					old, v := o(k), o(k)
					q.relistUpdate(k, old, v)
					m.update(k, old, v, true)
				}
			case 2:
				v := o(k)
				q.resyncObj(k, v)
				m.resyncObj(k, v)
			}
			switch r := rng.IntN(20); {
			case r < 3:
				op(rng.IntN(5))
			case r < 5:
				if pop() {
					delivered()
				}
			case r < 6:
				pop() // the handler is still in the call at the next step
			case r < 7:
				delivered()
			}
			check()
		}
		step++
		op(6) // a late handler's replay, or a first list after the store emptied
		check()
		step++
		op(5) // the list is done: synced once it is delivered
		check()
		// The drain, with the informer's traffic still coming.
		for len(m.order) > 0 || rng.IntN(4) != 0 {
			step++
			switch r := rng.IntN(20); {
			case r < 12:
				pop()
			case r < 16:
				delivered()
			default:
				op(rng.IntN(6))
			}
			check()
		}
		delivered()
		step++
		for pop() {
			delivered()
		}
		check()
		require.True(t, q.hasSynced(), "round %d: drained but not synced", round)
		q.mu.Lock()
		fifoCap := cap(q.fifo)
		q.mu.Unlock()
		require.LessOrEqual(t, fifoCap, keptBacklog, "round %d: a drained queue keeps the burst's FIFO", round)
	}
	require.GreaterOrEqual(t, released, rounds/2, "the burst's storage was given back")
}

// view is a Handler that applies its calls to a map, as a cache would,
// and fails on a call that does not start from what it has seen.
type view struct {
	mu   sync.Mutex
	seen map[string]string
	errs []string
}

func (v *view) OnAdd(o *obj, _ bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if rv, ok := v.seen[o.name]; ok {
		v.errs = append(v.errs, fmt.Sprintf("add of %s@%s, seen at %s", o.name, o.rv, rv))
	}
	v.seen[o.name] = o.rv
}

func (v *view) OnUpdate(old, o *obj) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if rv, ok := v.seen[o.name]; !ok || rv != old.rv {
		v.errs = append(v.errs, fmt.Sprintf("update of %s from %s, seen at %s (%v)", o.name, old.rv, rv, ok))
	}
	v.seen[o.name] = o.rv
}

func (v *view) OnDelete(o *obj, _ bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.seen[o.name]; !ok {
		v.errs = append(v.errs, fmt.Sprintf("delete of %s, never seen", o.name))
	}
	delete(v.seen, o.name)
}

// The informer's goroutine pushes bursts over many keys (lists, relists,
// resyncs, and watch events between them) while the handler's goroutine
// runs, so that drains and the storage they give back race with pushes.
// Every call the handler gets starts from what it last saw, and once the
// queue is idle the handler's view is the store.
func TestHandlerQueueConcurrentBursts(t *testing.T) {
	const keys = 1000
	rng := rand.New(rand.NewPCG(31, 32))
	v := &view{seen: map[string]string{}}
	hq := newHandlerQueue[*obj](v, true, slog.Default())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { hq.run(ctx); close(done) }()

	store := map[string]*obj{}
	rv := 0
	next := func(k string) *obj { rv++; return &obj{k, fmt.Sprint(rv)} }
	set := func(k string, relist bool) {
		o := next(k)
		if old, ok := store[k]; ok {
			if relist {
				hq.relistUpdate(k, old, o)
			} else {
				hq.update(k, old, o)
			}
		} else {
			hq.add(k, o, false)
		}
		store[k] = o
	}
	del := func(k string, unknown bool) {
		if old, ok := store[k]; ok {
			hq.remove(k, old, next(k), unknown)
			delete(store, k)
		}
	}
	for round := range 30 {
		switch round % 3 {
		case 0: // a relist: every key set, some deleted
			for _, i := range rng.Perm(keys) {
				k := fmt.Sprint("k", i)
				if rng.IntN(6) == 0 {
					del(k, true)
				} else {
					set(k, true)
				}
			}
		case 1: // a resync of the store
			for k, o := range store {
				hq.resyncObj(k, o)
			}
		case 2: // watch events, with pauses that let the handler drain
			for range 2000 {
				k := fmt.Sprint("k", rng.IntN(keys))
				if rng.IntN(4) == 0 {
					del(k, false)
				} else {
					set(k, false)
				}
			}
		}
		hq.markSynced()
		if rng.IntN(2) == 0 {
			require.Eventually(t, hq.hasSynced, waitLong, tick, "round %d", round)
		}
	}
	require.Eventually(t, hq.hasSynced, waitLong, tick)
	cancel()
	<-done
	v.mu.Lock()
	defer v.mu.Unlock()
	require.Empty(t, v.errs)
	want := map[string]string{}
	for k, o := range store {
		want[k] = o.rv
	}
	require.Equal(t, want, v.seen)
	hq.mu.Lock()
	defer hq.mu.Unlock()
	require.Empty(t, hq.items)
	require.LessOrEqual(t, cap(hq.fifo), keptBacklog, "the idle queue keeps a burst's FIFO")
}

// TestAddAllKeepsItsStorageUntilDone: the map and FIFO an addAll sized for
// its keys survive a drain between its batches (the handler keeping up
// with them), and are given back once the last addAll is done with every
// key delivered, so a burst neither regrows them batch by batch nor keeps
// them once idle.
func TestAddAllKeepsItsStorageUntilDone(t *testing.T) {
	keys := make([]string, 3*addBatch)
	objs := make([]*obj, len(keys))
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
		objs[i] = &obj{keys[i], "1"}
	}
	drain := func(q *handlerQueue[*obj]) (n int) {
		for {
			if _, ok := q.pop(); !ok {
				return n
			}
			n++
		}
	}
	q := newHandlerQueue[*obj](HandlerFuncs[*obj]{}, false, slog.Default())
	q.filling++ // another addAll still filling
	q.addAll(keys, objs, true)
	require.Equal(t, len(keys), drain(q))
	require.GreaterOrEqual(t, cap(q.fifo), len(keys), "drained while filling: the sized FIFO is kept")
	q.doneFilling()
	require.Zero(t, cap(q.fifo), "the last addAll done, the drained queue gives its storage back")
	require.Empty(t, q.items)

	q.addAll(keys, objs, true)
	require.Equal(t, len(keys), drain(q))
	require.Zero(t, cap(q.fifo), "drained after its addAll: given back at once")
}
