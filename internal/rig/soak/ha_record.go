package soak

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// haRecord is the HA soak's independent record, kept outside the code
// under test: the links (ha_link.go) record every ConfigMap write that
// reaches the server, with the process that sent it, and the holders
// the server's Leases show after each Lease write it applied; the
// soak's reconciler records each reconcile's start and end. The checks
// read only this record. Safe for concurrent use.
type haRecord struct {
	mu sync.Mutex
	// seq orders the records: a write's is taken when it reaches the
	// server, a Lease holder's once the write naming it was applied, a
	// reconcile's at its start.
	seq        int
	writes     []haWrite
	holders    map[string][]haHolder // Lease name -> holders in order of application
	reconciles map[string][]haSpan   // key -> reconciles in order of start
	nSpans     int
	zombies    int // reconciles still running after their context was cancelled
}

// haWrite is one ConfigMap write that reached the server.
type haWrite struct {
	proc, key string
	at        time.Time
	seq       int
	// relabel is a Label-mode relabel (field manager kwatch-shard): the
	// member makes it inside its hold of the key, before the reconcile
	// the record sees starts, so only the Lease check applies to it.
	relabel bool
}

// haHolder is a Lease's holderIdentity from one applied write on.
type haHolder struct {
	holder string
	at     time.Time
	seq    int
}

// haSpan is one reconcile: from its start until it returned or its
// context was cancelled, whichever came first. After the cancel its
// process may no longer act on the key: the fence refuses what the
// reconcile still tries (it may go on running, ignoring its context).
type haSpan struct {
	proc       string
	start, end time.Time // end is zero while it runs
	seq        int
}

func newHARecord() *haRecord {
	return &haRecord{holders: map[string][]haHolder{}, reconciles: map[string][]haSpan{}}
}

// begin records the start of a reconcile of key by proc and returns the
// function that ends it; the span also ends when ctx is cancelled.
func (h *haRecord) begin(ctx context.Context, proc, key string) func() {
	h.mu.Lock()
	h.seq++
	h.reconciles[key] = append(h.reconciles[key], haSpan{proc: proc, start: time.Now(), seq: h.seq})
	i := len(h.reconciles[key]) - 1
	h.nSpans++
	h.mu.Unlock()
	var once sync.Once
	end := func() {
		once.Do(func() {
			h.mu.Lock()
			h.reconciles[key][i].end = time.Now()
			h.mu.Unlock()
		})
	}
	stop := context.AfterFunc(ctx, end)
	return func() {
		if !stop() {
			h.mu.Lock()
			h.zombies++ // it ran past its cancel
			h.mu.Unlock()
		}
		end()
	}
}

// wrote records a ConfigMap write of key from proc reaching the server.
func (h *haRecord) wrote(proc, key string, relabel bool) {
	h.mu.Lock()
	h.seq++
	h.writes = append(h.writes, haWrite{proc: proc, key: key, at: time.Now(), seq: h.seq, relabel: relabel})
	h.mu.Unlock()
}

// held records the holder Lease name shows after a write the server
// applied (a change only).
func (h *haRecord) held(name, holder string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	hs := h.holders[name]
	if n := len(hs); n == 0 || hs[n-1].holder != holder {
		h.holders[name] = append(hs, haHolder{holder: holder, at: time.Now(), seq: h.seq})
	}
}

// overlaps lists every pair of reconciles of one key by two processes
// whose spans overlap.
func (h *haRecord) overlaps() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for key, spans := range h.reconciles {
		for i, a := range spans {
			for _, b := range spans[i+1:] {
				if !a.end.IsZero() && !b.start.Before(a.end) {
					break // spans are in start order: the rest start later still
				}
				if a.proc != b.proc && (b.end.IsZero() || a.start.Before(b.end)) {
					out = append(out, fmt.Sprintf("%s: %s %s-%s and %s %s-%s", key,
						a.proc, stamp(a.start), stamp(a.end), b.proc, stamp(b.start), stamp(b.end)))
				}
			}
		}
	}
	return out
}

// postLoss lists every write that reached the server from a process
// after it had lost its right to act: after another process started
// reconciling the key since this one last did (or before this one ever
// did), or while the Lease that gives the right (leaseOf of the
// process) named someone else.
func (h *haRecord) postLoss(leaseOf func(proc string) string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, w := range h.writes {
		last := "" // who last started reconciling w.key before w arrived
		for _, s := range h.reconciles[w.key] {
			if s.seq > w.seq {
				break
			}
			last = s.proc
		}
		if last != w.proc && !w.relabel {
			out = append(out, fmt.Sprintf("%s from %s at %s, after %q started reconciling it", w.key, w.proc, stamp(w.at), last))
		}
		name := leaseOf(w.proc)
		holder := ""
		for _, l := range h.holders[name] {
			if l.seq > w.seq {
				break
			}
			holder = l.holder
		}
		if holder != w.proc {
			out = append(out, fmt.Sprintf("%s from %s at %s while Lease %s named %q", w.key, w.proc, stamp(w.at), name, holder))
		}
	}
	return out
}

// reconciledSince reports whether every key of keys had a reconcile
// start after t.
func (h *haRecord) reconciledSince(keys []string, t time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range keys {
		s := h.reconciles[k]
		if len(s) == 0 || s[len(s)-1].start.Before(t) {
			return false
		}
	}
	return true
}

func (h *haRecord) counts() (reconciles, writes, zombies int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.nSpans, len(h.writes), h.zombies
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "(running)"
	}
	return t.Format("15:04:05.000")
}
