package sim

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
)

// FaultType names an injected misbehaviour.
type FaultType string

// Request faults: each applies to the next Count matching requests.
const (
	// FaultDropWatch ends a watch stream cleanly (final zero chunk) after AfterEvents events.
	FaultDropWatch FaultType = "drop-watch"
	// FaultCutWatch aborts a watch after AfterEvents events, in the middle of the next
	// frame, without the final zero chunk (HTTP/2: RST_STREAM).
	FaultCutWatch FaultType = "cut-watch"
	// FaultStall sends the 200 headers (and AfterEvents events, for a watch), then goes
	// silent, leaving the connection open until the client goes away.
	FaultStall FaultType = "stall"
	// FaultError answers with Code (429, 500 or 503) and a Retry-After header.
	FaultError FaultType = "error"
	// FaultSplitWrites writes the response body in random pieces of 1-64 bytes, each
	// flushed on its own.
	FaultSplitWrites FaultType = "split-writes"
)

// Immediate actions accepted by the admin endpoint (POST /sim/faults with this type).
const (
	// ActionCompact compacts history: any older resourceVersion now gets 410.
	ActionCompact FaultType = "compact"
	// ActionExpireContinue expires every continue token handed out so far.
	ActionExpireContinue FaultType = "expire-continue"
	// ActionDropWatches ends every open watch at once (a server restart); with
	// LoseHistory the history is also lost, so every watcher must relist.
	ActionDropWatches FaultType = "drop-watches"
)

// Fault is one injected misbehaviour; its JSON form is what POST /sim/faults accepts.
// Type is required; every other zero field has the default its comment gives.
type Fault struct {
	Type FaultType `json:"type"`
	// Match selects requests: "list", "watch", "get", "write" (create, update, patch,
	// delete) or "" for any. For drop-watch and cut-watch only watches match.
	Match string `json:"match,omitempty"`
	// Resource restricts the fault to "pods", "deployments.apps", ...; "" = any.
	Resource string `json:"resource,omitempty"`
	// Count is how many matching requests the fault affects; 0 means 1, negative
	// means every matching request until ClearFaults.
	Count int `json:"count,omitempty"`
	// AfterEvents is how many events a drop/cut/stall watch sends first.
	AfterEvents int `json:"afterEvents,omitempty"`
	// Code is the status of an error fault: 429, 500 or 503. Zero means 503.
	Code int `json:"code,omitempty"`
	// RetryAfterSeconds is sent in Retry-After and the Status details. Zero means 1.
	RetryAfterSeconds int `json:"retryAfterSeconds,omitempty"`
	// LoseHistory goes with ActionDropWatches.
	LoseHistory bool `json:"loseHistory,omitempty"`

	gen uint64 // the faultState generation a request took this copy in
	id  uint64 // set by InjectFault: which injection a copy came from (faultwait.go)
}

func (f *Fault) validate() error {
	switch f.Type {
	case FaultDropWatch, FaultCutWatch, FaultStall, FaultSplitWrites:
	case FaultError:
		if f.Code == 0 {
			f.Code = http.StatusServiceUnavailable
		}
		if f.Code != 429 && f.Code != 500 && f.Code != 503 {
			return fmt.Errorf("sim: fault code %d not supported: want 429, 500 or 503", f.Code)
		}
	default:
		return fmt.Errorf("sim: unknown fault type %q", f.Type)
	}
	switch f.Match {
	case "", "list", "watch", "get", "write":
	default:
		return fmt.Errorf("sim: fault match %q not supported: want list, watch, get, write or empty", f.Match)
	}
	if f.AfterEvents < 0 {
		return fmt.Errorf("sim: fault afterEvents must be >= 0, got %d", f.AfterEvents)
	}
	if f.Count == 0 {
		f.Count = 1
	}
	if f.RetryAfterSeconds <= 0 {
		f.RetryAfterSeconds = 1
	}
	return nil
}

// faultState holds pending faults and what fired. Every field but injected is
// guarded by mu.
type faultState struct {
	mu      sync.Mutex
	pending []*Fault
	rng     *rand.Rand
	// fired counts, per type, the times a request fault was applied to a request
	// (an error or a stall answered, a watch dropped, cut or stalled, a body split)
	// and the times an action was performed. A fault taken by a request that ends
	// before the fault's moment (a watch that closes before AfterEvents events)
	// does not count.
	fired    map[FaultType]int64
	injected atomic.Uint64 // requests that took a fault (one use of its Count each)
	// gen is bumped by ClearFaults (under mu): a taken fault from an older
	// generation is dropped instead of applied. Read without mu by live.
	gen atomic.Uint64
	// waits holds the per-injection counts and the change signal (faultwait.go).
	waits faultWaits
}

// apply counts f as fired and reports true, unless ClearFaults ran since a
// request took it: then the fault is void and must not be applied.
func (fs *faultState) apply(f *Fault) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f.gen != fs.gen.Load() {
		return false
	}
	fs.countLocked(f.Type)
	fs.waits.firedLocked(f.id)
	return true
}

// live reports whether f, taken by a request, has not been cleared since.
func (fs *faultState) live(f *Fault) bool { return f.gen == fs.gen.Load() }

// fire counts one action of type t.
func (fs *faultState) fire(t FaultType) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.countLocked(t)
}

// countLocked counts one firing of t; fs.mu is held.
func (fs *faultState) countLocked(t FaultType) {
	if fs.fired == nil {
		fs.fired = map[FaultType]int64{}
	}
	fs.fired[t]++
	fs.waits.signalLocked()
}

func (fs *faultState) firedCopy() map[FaultType]int64 {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make(map[FaultType]int64, len(fs.fired))
	for t, n := range fs.fired {
		out[t] = n
	}
	return out
}

func (fs *faultState) resetFired() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.fired = nil
}

func (fs *faultState) init(seed uint64) { fs.rng = rand.New(rand.NewPCG(seed, seed+1)) }

func (fs *faultState) newRand() *rand.Rand {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return rand.New(rand.NewPCG(fs.rng.Uint64(), fs.rng.Uint64()))
}

// take consumes one use of the first pending fault of one of types matching the
// request. The caller applies it only if apply agrees, which counts it.
func (fs *faultState) take(r *resource, v verb, types ...FaultType) *Fault {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, f := range fs.pending {
		if !f.applies(r, v, types) {
			continue
		}
		c := *f
		c.gen = fs.gen.Load()
		if f.Count > 0 {
			f.Count--
			if f.Count == 0 {
				fs.pending = append(fs.pending[:i], fs.pending[i+1:]...)
			}
		}
		fs.injected.Add(1)
		return &c
	}
	return nil
}

// giveBack returns one use of f, taken by a request that ended before applying
// it, to the front of the queue, unless ClearFaults ran since it was taken.
func (fs *faultState) giveBack(f *Fault) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f.gen != fs.gen.Load() || f.Count < 0 {
		return // cleared, or a fault for every request that never left the queue
	}
	for _, p := range fs.pending {
		if p.id == f.id {
			p.Count++
			return
		}
	}
	c := *f
	c.Count = 1
	fs.pending = append([]*Fault{&c}, fs.pending...)
}

func (f *Fault) applies(r *resource, v verb, types []FaultType) bool {
	ok := false
	for _, t := range types {
		ok = ok || f.Type == t
	}
	if !ok || (f.Resource != "" && f.Resource != r.info.key() && f.Resource != r.info.Resource) {
		return false
	}
	if (f.Type == FaultDropWatch || f.Type == FaultCutWatch) && v != verbWatch {
		return false
	}
	switch f.Match {
	case "list":
		return v == verbList
	case "watch":
		return v == verbWatch
	case "get":
		return v == verbGet
	case "write":
		return v == verbCreate || v == verbUpdate || v == verbPatch || v == verbDelete
	}
	return true
}

// InjectFault queues a request fault (see FaultType), or performs an immediate action.
func (s *Server) InjectFault(f Fault) error {
	_, err := s.injectFault(f)
	return err
}

// injectFault is InjectFault; it returns the id of a queued request fault (0 for
// an action, which is done before it returns).
func (s *Server) injectFault(f Fault) (uint64, error) {
	switch f.Type {
	case ActionCompact:
		s.Compact()
		return 0, nil
	case ActionExpireContinue:
		s.ExpireContinueTokens()
		return 0, nil
	case ActionDropWatches:
		s.DropWatches(f.LoseHistory)
		return 0, nil
	}
	if err := f.validate(); err != nil {
		return 0, err
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	if len(s.faults.pending) >= maxPendingFaults {
		return 0, fmt.Errorf("sim: %d faults already pending (limit %d); clear some first", len(s.faults.pending), maxPendingFaults)
	}
	f.id = s.faults.waits.nextIDLocked()
	s.faults.pending = append(s.faults.pending, &f)
	return f.id, nil
}

// maxPendingFaults bounds the fault queue (the admin endpoint is reachable by clients).
const maxPendingFaults = 1000

// FiredFaults returns how many times each kind of fault fired since New or
// ResetStats: a request fault each time it was applied to a request (an error
// or stall answered, a watch dropped, cut or stalled, a body written in
// pieces), an action (compact, expire-continue, drop-watches) each time it was
// performed, by InjectFault or by its method. A request fault that was queued
// but never applied does not count. Kinds that never fired are absent.
func (s *Server) FiredFaults() map[FaultType]int64 { return s.faults.firedCopy() }

// Faults returns the pending faults with their remaining counts.
func (s *Server) Faults() []Fault {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	out := make([]Fault, len(s.faults.pending))
	for i, f := range s.faults.pending {
		out[i] = *f
	}
	return out
}

// ClearFaults drops every pending fault, and every fault a request has taken
// but not applied yet (a watch before its AfterEvents events, a body before its
// first byte): those never fire. Bodies being written in pieces are written
// whole from now on. A stall already in progress goes on until its client
// leaves, as a dead server's connection would.
func (s *Server) ClearFaults() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.pending = nil
	s.faults.gen.Add(1)
}

// Compact makes every resourceVersion older than the current one too old: watches
// from them get the 410 ERROR event, exact lists and continue tokens get 410. Open
// watches are not affected. It returns the new floor.
func (s *Server) Compact() uint64 {
	defer s.faults.fire(ActionCompact)
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	st.floor = st.rv
	return st.rv
}

// ExpireContinueTokens makes every continue token handed out so far answer 410.
func (s *Server) ExpireContinueTokens() {
	defer s.faults.fire(ActionExpireContinue)
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	st.tokenFloor = st.rv + 1
}

// DropWatches ends every open watch stream cleanly, like an API server restart. With
// loseHistory the event history is dropped too, so resuming from any earlier
// resourceVersion gets 410 and every watcher must relist.
func (s *Server) DropWatches(loseHistory bool) {
	defer s.faults.fire(ActionDropWatches)
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	close(st.restart)
	st.restart = make(chan struct{})
	if loseHistory {
		st.hist.clear()
		st.hist.next = st.rv + 1
		st.floor = st.rv
		st.tokenFloor = st.rv + 1
	}
}

// applyRequestFaults answers the request with a due error or stall fault; true means
// the request was answered. Watch stalls are left to the stream (after AfterEvents).
func (s *Server) applyRequestFaults(w http.ResponseWriter, r *http.Request, res *resource, v verb) bool {
	types := []FaultType{FaultError, FaultStall}
	if v == verbWatch {
		types = types[:1]
	}
	f := s.faults.take(res, v, types...)
	if f == nil {
		return false
	}
	if !s.faults.apply(f) {
		return false // cleared since it was taken
	}
	if f.Type == FaultError {
		writeStatus(w, errInjected(f.Code, f.RetryAfterSeconds))
		return true
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	s.stall(r)
	return true
}

// stall waits until the client goes away or the server stops.
func (s *Server) stall(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.stopped():
	}
}
