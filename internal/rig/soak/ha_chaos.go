package soak

import (
	"context"
	"time"

	"github.com/kwatch/kwatch/leader"
)

// The HA soak's own faults, beside the soak's (faults.go), each on one
// replica at a time. Each counts as fired only when it did something:
// a Lease write answered 500, a request or goroutine held by a freeze,
// a running process stopped.
const (
	haLease500 = "ha:lease-500" // the replica's Lease writes answered 500 for 5-25 s
	haFreeze   = "ha:freeze"    // the replica frozen for longer than the lease duration
	haRestart  = "ha:restart"   // the replica's process stopped and a new one started
	haSoak     = "soak"         // one of the soak's faults (faults.go), on the server or one replica's network
)

var haDeck = []string{haLease500, haFreeze, haRestart, haSoak, haSoak}

// haUndo is something the chaos loop does later: the end of a fault.
type haUndo struct {
	at time.Time
	do func()
}

// chaos deals faults in rounds of random order, one every 2-6 s, until
// cfg.Duration has passed, then ends every fault still on.
func (r *haMode) chaos(ctx context.Context) error {
	end := time.Now().Add(r.cfg.Duration)
	var undo []haUndo
	var deck []string
	busy := make([]time.Time, len(r.slots)) // a replica has one HA fault at a time
	next := time.Now().Add(r.between(2, 6))
	tk := time.NewTicker(250 * time.Millisecond)
	defer tk.Stop()
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			end = time.Now()
			continue
		case <-tk.C:
		}
		undo = runDue(undo, time.Now())
		if time.Now().Before(next) {
			continue
		}
		next = time.Now().Add(r.between(2, 6))
		if len(deck) == 0 {
			deck = append(deck, haDeck...)
			r.rng.Shuffle(len(deck), func(i, j int) { deck[i], deck[j] = deck[j], deck[i] })
		}
		what := deck[0]
		deck = deck[1:]
		i := r.rng.IntN(len(r.slots))
		if what != haSoak && time.Now().Before(busy[i]) {
			deck = append(deck, what) // that replica is taken: later
			continue
		}
		if u, until := r.act(what, r.slots[i]); u != nil {
			undo = append(undo, *u)
			busy[i] = until
		}
	}
	runDue(undo, time.Now().Add(time.Hour))
	r.srv.ClearFaults()
	return nil
}

// between is a random duration of lo to hi seconds.
func (r *haMode) between(lo, hi int) time.Duration {
	return time.Duration(lo)*time.Second + time.Duration(r.rng.Int64N(int64(hi-lo)*int64(time.Second)))
}

func runDue(undo []haUndo, now time.Time) []haUndo {
	kept := undo[:0]
	for _, u := range undo {
		if now.Before(u.at) {
			kept = append(kept, u)
			continue
		}
		u.do()
	}
	return kept
}

// act makes one fault on slot s and returns its end, if it has one,
// and until when s is taken.
func (r *haMode) act(what string, s *haSlot) (*haUndo, time.Time) {
	if what != haSoak {
		r.scheduled(what)
	}
	p := s.current()
	switch {
	case what == haRestart:
		if s.restart() {
			r.fire(haRestart, 1)
		}
		return nil, time.Now().Add(r.between(5, 10))
	case p == nil:
		return nil, time.Time{} // between two processes: nothing to break
	case what == haLease500:
		before := p.link.refused.Load()
		d := r.between(5, 25)
		p.link.failLeasesFor(d)
		return &haUndo{at: time.Now().Add(d), do: func() {
			p.link.failLeasesFor(0)
			if n := p.link.refused.Load() - before; n > 0 {
				r.fire(haLease500, 1)
				r.fire(haLease500+" requests", n)
			}
		}}, time.Now().Add(d + 5*time.Second)
	case what == haFreeze:
		before := p.pause.Hits()
		d := leader.DefaultLeaseDuration + r.between(1, 15)
		p.pause.Freeze()
		return &haUndo{at: time.Now().Add(d), do: func() {
			p.pause.Thaw()
			if n := p.pause.Hits() - before; n > 0 {
				r.fire(haFreeze, 1)
				r.fire(haFreeze+" holds", n)
			}
		}}, time.Now().Add(d + 5*time.Second)
	}
	f := faults[r.rng.IntN(len(faults))]
	r.scheduled("soak:" + f.name)
	if _, err := f.do(r.srv, p.link.proxy, r.rng); err != nil {
		r.fire("soak:"+f.name+" failed", 1)
	}
	if f.name != "dead-connection" {
		return nil, time.Time{}
	}
	// A dead connection is found dead in the end (TCP keepalive, a
	// restart of the peer): cut it a while later.
	proxy := p.link.proxy
	return &haUndo{at: time.Now().Add(r.between(10, 20)), do: func() { proxy.CutAll() }}, time.Time{}
}

func (r *haMode) scheduled(what string) {
	r.mu.Lock()
	r.sched[what]++
	r.mu.Unlock()
}

func (r *haMode) fire(kind string, n int64) {
	r.mu.Lock()
	r.fired[kind] += n
	r.mu.Unlock()
}

// quiet waits, after the faults, for every key to be reconciled again:
// one lease duration and a few retries for a leader or a ring to settle,
// then at most two minutes. It returns the keys nobody reconciled.
func (r *haMode) quiet(ctx context.Context) []string {
	select {
	case <-ctx.Done():
		return nil
	case <-time.After(leader.DefaultLeaseDuration + 3*leader.DefaultRetryPeriod):
	}
	from := time.Now()
	for end := from.Add(2 * time.Minute); time.Now().Before(end) && ctx.Err() == nil; {
		if r.rec.reconciledSince(r.keys, from) {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	var out []string
	for _, k := range r.keys {
		if !r.rec.reconciledSince([]string{k}, from) {
			out = append(out, k)
		}
	}
	return out
}
