package kwatchtest

import (
	"sync"
	"time"
)

// LagOptions configure LagWatch.
type LagOptions struct {
	// Resource is the lagging resource ("pods", "deployments.apps").
	// Required.
	Resource string
	// Delay is how late every watch of Resource sends each event. Required,
	// positive.
	Delay time.Duration
}

// Lag is a watch lag in force; Stop ends it. Its methods are safe for
// concurrent use.
type Lag struct {
	s    *Server
	res  string
	once sync.Once
}

// LagWatch makes every watch of opts.Resource, open or future, send each
// event (and each periodic bookmark) opts.Delay after it happened, in
// order: a cache that lags the server by that much, as through a slow
// watch cache or network. Lists, gets and writes are not delayed, nor are
// a watch's initial events (a streaming list), so a controller's own
// writes succeed at once while its cache shows them only Delay later: the
// condition under which a reconcile that trusts its cache creates twice.
// A second LagWatch of the same resource replaces the first. An unknown
// resource or a delay that is not positive fails the test (panics
// without one).
func (s *Server) LagWatch(opts LagOptions) *Lag {
	if opts.Delay <= 0 {
		s.fatalf("kwatchtest: LagWatch(%s): Delay must be positive, got %v", opts.Resource, opts.Delay)
		return &Lag{s: s, res: opts.Resource}
	}
	if err := s.srv.SetWatchLag(opts.Resource, opts.Delay); err != nil {
		s.fatalf("kwatchtest: LagWatch: %v", err)
	}
	return &Lag{s: s, res: opts.Resource}
}

// Stop ends the lag: what the watches hold is sent at once, and events go
// out as they happen again. Calling it again does nothing.
func (l *Lag) Stop() {
	l.once.Do(func() { _ = l.s.srv.SetWatchLag(l.res, 0) })
}
