package testutil

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
)

// Freeze stops the parts of a simulated replica that ask it, as SIGSTOP
// would: while frozen, Hold and Wait block until Thaw. The clock goes on,
// so on thaw the replica finds its Lease term over by its monotonic clock,
// as a stopped process does. The zero value is thawed. Safe for
// concurrent use.
type Freeze struct {
	mu     sync.Mutex
	thawed chan struct{} // nil unless frozen; closed at Thaw
	hits   atomic.Int64  // goroutines and requests a freeze held
}

// Freeze freezes; freezing a frozen Freeze does nothing.
func (f *Freeze) Freeze() {
	f.mu.Lock()
	if f.thawed == nil {
		f.thawed = make(chan struct{})
	}
	f.mu.Unlock()
}

// Thaw releases everything held; thawing a thawed Freeze does nothing.
func (f *Freeze) Thaw() {
	f.mu.Lock()
	if f.thawed != nil {
		close(f.thawed)
		f.thawed = nil
	}
	f.mu.Unlock()
}

// Hold blocks while frozen, until Thaw or ctx ends: held says whether it
// blocked, ok whether ctx was still alive after.
func (f *Freeze) Hold(ctx context.Context) (held, ok bool) {
	f.mu.Lock()
	ch := f.thawed
	f.mu.Unlock()
	if ch == nil {
		return false, true
	}
	f.hits.Add(1)
	select {
	case <-ch:
		return true, ctx.Err() == nil
	case <-ctx.Done():
		return true, false
	}
}

// Wait blocks while frozen, whatever the caller's context: a stopped
// process does not notice its context either.
func (f *Freeze) Wait() { f.Hold(context.Background()) }

// Hits counts the goroutines and requests a freeze has held so far: a
// test counts a freeze only when it held something.
func (f *Freeze) Hits() int64 { return f.hits.Load() }

// FreezingHandler wraps h so that each log line waits while f is frozen:
// an elector's or shard member's goroutine then stops where it logs (a
// failed renew, a lost term), as a stopped or starved one would.
func FreezingHandler(h slog.Handler, f *Freeze) slog.Handler { return freezing{h, f} }

type freezing struct {
	slog.Handler
	f *Freeze
}

func (h freezing) Handle(ctx context.Context, r slog.Record) error {
	h.f.Wait()
	return h.Handler.Handle(ctx, r)
}

func (h freezing) WithAttrs(as []slog.Attr) slog.Handler {
	return freezing{h.Handler.WithAttrs(as), h.f}
}
func (h freezing) WithGroup(name string) slog.Handler {
	return freezing{h.Handler.WithGroup(name), h.f}
}
func (h freezing) Enabled(context.Context, slog.Level) bool { return true }
