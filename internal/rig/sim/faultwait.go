package sim

import (
	"context"
	"errors"
)

// Waiting for a fault to fire. Every queued request fault gets an id; each time a
// copy of it is applied to a request, its own count goes up besides its type's
// (FiredFaults), and a signal channel is closed and replaced, so a test can block
// until its fault fired instead of sleeping.

// faultWaits is guarded by faultState.mu.
type faultWaits struct {
	last    uint64           // the last id handed out; ids start at 1
	byID    map[uint64]int64 // times each injected request fault fired
	changed chan struct{}    // closed at the next firing of any fault; nil until asked for
}

func (w *faultWaits) nextIDLocked() uint64 {
	w.last++
	return w.last
}

func (w *faultWaits) firedLocked(id uint64) {
	if id == 0 {
		return
	}
	if w.byID == nil {
		w.byID = map[uint64]int64{}
	}
	w.byID[id]++
}

func (w *faultWaits) signalLocked() {
	if w.changed != nil {
		close(w.changed)
		w.changed = nil
	}
}

// InjectedFault is one fault queued by InjectFaultTracked. Its methods are safe for
// concurrent use.
type InjectedFault struct {
	s  *Server
	id uint64 // 0: an action, done before InjectFaultTracked returned
}

// InjectFaultTracked is InjectFault, and returns a handle that tells when (and how
// often) this very fault fired. An action fires before it returns.
func (s *Server) InjectFaultTracked(f Fault) (*InjectedFault, error) {
	id, err := s.injectFault(f)
	if err != nil {
		return nil, err
	}
	return &InjectedFault{s: s, id: id}, nil
}

// Fired returns how many requests this fault was applied to (1 for an action).
func (f *InjectedFault) Fired() int64 {
	n, _ := f.state()
	return n
}

// state returns the count and a channel closed at the next firing of any fault.
func (f *InjectedFault) state() (int64, <-chan struct{}) {
	if f.id == 0 {
		return 1, nil
	}
	fs := &f.s.faults
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.waits.changed == nil {
		fs.waits.changed = make(chan struct{})
	}
	return fs.waits.byID[f.id], fs.waits.changed
}

// Wait returns once the fault has fired at least n times, or with ctx's error.
func (f *InjectedFault) Wait(ctx context.Context, n int64) error {
	for {
		got, changed := f.state()
		if got >= n {
			return nil
		}
		select {
		case <-changed:
		case <-f.s.stopped():
			return errServerStopped
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

var errServerStopped = errors.New("sim: server stopped before the fault fired")
