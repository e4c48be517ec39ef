package kwatchtest

import (
	"context"
	"fmt"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// FaultOptions narrows which requests a fault applies to. The zero value is the
// next matching request of any resource. Faults apply to clients' requests
// only; the Server's own methods (Apply, Get, List, ...) never take one.
type FaultOptions struct {
	// Resource restricts the fault to one resource ("pods", "deployments.apps").
	// Empty means any.
	Resource string
	// Count is how many matching requests the fault affects. Zero means 1;
	// negative means every matching request until ClearFaults.
	Count int
	// AfterEvents is how many events a cut, dropped or stalled watch delivers
	// before the fault. Zero means none: the fault comes right after the headers.
	AfterEvents int
	// Match selects the requests of a Stall, Error or SplitWrites fault: "list",
	// "watch", "get", "write" (create, update, patch, delete) or "" for any.
	Match string
}

// Fault is a fault given to the server. Its methods are safe for concurrent use.
type Fault struct {
	kind string
	f    *sim.InjectedFault
}

// Fired reports how many requests the fault has been applied to so far. A fault
// counts when it is applied (a watch cut after its AfterEvents events, an error
// answered), not when a request merely took it.
func (f *Fault) Fired() int { return int(f.f.Fired()) }

// Wait returns once the fault has fired, or with ctx's error (or an error if
// the server stopped first). A test waits on it instead of sleeping.
func (f *Fault) Wait(ctx context.Context) error { return f.WaitN(ctx, 1) }

// WaitN returns once the fault has fired n times.
func (f *Fault) WaitN(ctx context.Context, n int) error {
	if err := f.f.Wait(ctx, int64(n)); err != nil {
		return fmt.Errorf("kwatchtest: %s fault fired %d of %d times: %w", f.kind, f.Fired(), n, err)
	}
	return nil
}

func (s *Server) inject(kind string, sf sim.Fault, o FaultOptions) *Fault {
	sf.Resource, sf.Count, sf.AfterEvents = o.Resource, o.Count, o.AfterEvents
	if sf.Match == "" {
		sf.Match = o.Match
	}
	f, err := s.srv.InjectFaultTracked(sf)
	if err != nil {
		s.fatalf("kwatchtest: %s: %v", kind, err)
		return &Fault{kind: kind, f: f}
	}
	return &Fault{kind: kind, f: f}
}

// CutWatch aborts the next watch after o.AfterEvents events in the middle of the
// frame that follows them, as a broken connection or a killed server does: no
// final chunk over HTTP/1.1, a stream reset over HTTP/2; the client sees an
// unexpected EOF. The cut comes with that next frame (an event or a bookmark), so
// a test makes a change after the fault for it to fire. The watch already open
// when CutWatch is called is not affected; Restart ends it. A watch that takes
// the fault and is ended by Restart before the fault fired gives it back, to the
// watch the client opens next.
func (s *Server) CutWatch(o FaultOptions) *Fault {
	return s.inject("cut-watch", sim.Fault{Type: sim.FaultCutWatch}, o)
}

// DropWatch ends the next watch cleanly after o.AfterEvents events, as the
// server's watch timeout does: right after the last of those events.
func (s *Server) DropWatch(o FaultOptions) *Fault {
	return s.inject("drop-watch", sim.Fault{Type: sim.FaultDropWatch}, o)
}

// Stall answers the next matching request's headers (and, for a watch,
// o.AfterEvents events), then sends nothing until the client gives up: a dead
// connection that a client notices only by its own deadlines.
func (s *Server) Stall(o FaultOptions) *Fault {
	return s.inject("stall", sim.Fault{Type: sim.FaultStall}, o)
}

// Error answers the next matching request with code (429, 500 or 503) and
// Retry-After: retryAfterSeconds (zero means 1).
func (s *Server) Error(code, retryAfterSeconds int, o FaultOptions) *Fault {
	return s.inject(fmt.Sprintf("error %d", code), sim.Fault{Type: sim.FaultError, Code: code, RetryAfterSeconds: retryAfterSeconds}, o)
}

// SplitWrites writes the next matching response body in random pieces of 1-64
// bytes, each flushed on its own, so decoders see frames split anywhere.
func (s *Server) SplitWrites(o FaultOptions) *Fault {
	return s.inject("split-writes", sim.Fault{Type: sim.FaultSplitWrites}, o)
}

// Compact drops the history before the current resourceVersion: watches and
// exact lists from older ones get 410 Gone, as after etcd's compaction. It is
// done when Compact returns.
func (s *Server) Compact() { s.srv.Compact() }

// ExpireContinueTokens makes every continue token handed out so far answer 410,
// as tokens older than the compaction do.
func (s *Server) ExpireContinueTokens() { s.srv.ExpireContinueTokens() }

// Restart ends every open watch at once, as an API server restart does. With
// loseHistory the watch history goes too, so every client must relist.
func (s *Server) Restart(loseHistory bool) { s.srv.DropWatches(loseHistory) }

// ClearFaults drops every fault not applied yet; none of them fires afterwards.
func (s *Server) ClearFaults() { s.srv.ClearFaults() }
