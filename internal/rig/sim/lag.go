package sim

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"
)

// Watch lag: a fault that holds a resource's watch events for a while.
//
// With a lag D on a resource, every watch of it sends each live event D
// after the event happened (its commit time in the history), and each
// periodic bookmark D after it was due: all in order, as a watch cache or
// a network that is D behind would. A watch's initial state (the ADDED
// events of a watch from "" or a streaming list, and its end bookmark) is
// the list, which is not delayed; neither are lists and gets. The lag
// applies to open watches from their next event on, and stopping it (a
// lag of 0) releases what is held at once. A held stream still ends when
// the client goes away, the server stops or history is lost.
//
// A held watch reads no event while it waits, so it holds no copy of the
// events: what waits is the history, bounded as always by its window.

// watchLags holds the lag per resource name ("pods", "deployments.apps").
// The map is replaced whole on a change, so a watch reads it without a lock.
type watchLags struct {
	mu sync.Mutex // serializes writers
	by atomic.Pointer[map[string]time.Duration]
}

// SetWatchLag makes every watch of resource ("pods", "deployments.apps")
// send its events d late (see watchLags); d = 0 ends the lag. It returns
// an error for a negative d or an unknown resource.
func (s *Server) SetWatchLag(resource string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("sim: watch lag of %s must be >= 0, got %v", resource, d)
	}
	if !s.knowsResource(resource) {
		return fmt.Errorf("sim: watch lag: unknown resource %q", resource)
	}
	l := &s.lags
	l.mu.Lock()
	defer l.mu.Unlock()
	next := map[string]time.Duration{}
	if cur := l.by.Load(); cur != nil {
		next = maps.Clone(*cur)
	}
	if d == 0 {
		delete(next, resource)
	} else {
		next[resource] = d
	}
	if len(next) == 0 {
		l.by.Store(nil)
	} else {
		l.by.Store(&next)
	}
	s.lagChanged()
	return nil
}

// knowsResource reports whether name is a served resource's "plural" or
// "plural.group".
func (s *Server) knowsResource(name string) bool {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, r := range st.resources {
		if r.info.key() == name || r.info.Resource == name {
			return true
		}
	}
	return false
}

// lagOf is the current lag of r's watches, 0 for none.
func (s *Server) lagOf(r *resource) time.Duration {
	m := s.lags.by.Load()
	if m == nil {
		return 0
	}
	if d, ok := (*m)[r.info.key()]; ok {
		return d
	}
	return (*m)[r.info.Resource]
}

// lagChanged wakes every held watch to read the lag again.
func (s *Server) lagChanged() {
	s.lagWake.Lock()
	close(s.lagWakeCh())
	s.lagWakeC = make(chan struct{})
	s.lagWake.Unlock()
}

// lagWakeCh is the channel the next lag change closes.
func (s *Server) lagWakeCh() chan struct{} {
	if s.lagWakeC == nil {
		s.lagWakeC = make(chan struct{})
	}
	return s.lagWakeC
}

// hold waits until at plus the resource's lag, flushing what the stream
// has buffered first so that nothing earlier is held longer than its own
// lag. It returns false when the stream must end instead (the client went
// away, the server stopped or restarted).
func (ws *watchStream) hold(ctx context.Context, at time.Time, restart <-chan struct{}) bool {
	s := ws.s
	for {
		d := s.lagOf(ws.t.r)
		if d <= 0 {
			return true
		}
		wait := at.Add(d).Sub(s.store.clock())
		if wait <= 0 {
			return true
		}
		ws.out.flush()
		s.lagWake.Lock()
		changed := s.lagWakeCh()
		s.lagWake.Unlock()
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-changed: // the lag changed: wait for the new one
		case <-ctx.Done():
		case <-restart:
		case <-s.stopped():
		}
		timer.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-restart:
			return false
		case <-s.stopped():
			return false
		default:
		}
	}
}
