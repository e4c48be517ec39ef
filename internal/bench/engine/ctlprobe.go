package engine

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwatch/kwatch/internal/bench/wire"
)

// ctlProbe is what both controllers' reconcilers call with the pod they
// read from their cache: it decides the patch (the same rule for both,
// package wire) and counts keys that reached the armed round's final
// state. Reconciles run on several workers, so the round's state is
// guarded by mu; the counters are atomic.
type ctlProbe struct {
	calls   atomic.Int64
	patches atomic.Int64
	firstNS atomic.Int64 // Unix ns of the armed round's first reconcile

	mu       sync.Mutex
	round    string              // armed round ID; guarded by mu
	want     int                 // keys that complete the round; guarded by mu
	done     map[string]struct{} // keys complete in the round; guarded by mu
	doneNS   int64               // Unix ns the last key completed; guarded by mu
	doneCPU  time.Duration       // process CPU then; guarded by mu
	doneAt   [2]int64            // calls and patches then; guarded by mu
	finished chan struct{}       // closed when len(done) reaches want; guarded by mu
}

// arm starts a round: want keys must each be reconciled in their final
// state for round.
func (p *ctlProbe) arm(round string, want int) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.round, p.want, p.doneNS = round, want, 0
	p.firstNS.Store(0)
	p.done = make(map[string]struct{}, want)
	p.finished = make(chan struct{})
	return p.finished
}

// ctlDone is the state of the armed round.
type ctlDone struct {
	keys           int
	ns             int64
	cpu            time.Duration
	calls, patches int64 // totals when the last key completed
}

// result reads the armed round.
func (p *ctlProbe) result() ctlDone {
	p.mu.Lock()
	defer p.mu.Unlock()
	return ctlDone{keys: len(p.done), ns: p.doneNS, cpu: p.doneCPU, calls: p.doneAt[0], patches: p.doneAt[1]}
}

// seen is called by every reconcile with the cached pod's name and
// annotations. It returns the merge patch to send, or nil when the pod
// needs none.
func (p *ctlProbe) seen(namespace, name string, ann map[string]string) []byte {
	n := p.calls.Add(1)
	if p.firstNS.Load() == 0 {
		p.firstNS.CompareAndSwap(0, time.Now().UnixNano())
	}
	if round, ok := wire.NeedsPatch(name, ann); ok {
		p.patches.Add(1)
		return patchBody(round, n)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil || len(p.done) >= p.want || !wire.Complete(name, ann, p.round) {
		return nil
	}
	key := namespace + "/" + name
	if _, dup := p.done[key]; dup {
		return nil
	}
	p.done[key] = struct{}{}
	if len(p.done) == p.want {
		p.doneNS, p.doneCPU = time.Now().UnixNano(), cpuTime()
		p.doneAt = [2]int64{p.calls.Load(), p.patches.Load()}
		close(p.finished)
	}
	return nil
}

// patchBody is the merge patch both reconcilers send: the round they saw
// and their reconcile count.
func patchBody(round string, count int64) []byte {
	b := make([]byte, 0, 128)
	b = append(b, `{"metadata":{"annotations":{"`+wire.ReconciledKey+`":`...)
	b = strconv.AppendQuote(b, round)
	b = append(b, `,"`+wire.CountKey+`":"`...)
	b = strconv.AppendInt(b, count, 10)
	return append(b, `"}}}`...)
}
