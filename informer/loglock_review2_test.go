package informer

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/store"
)

// A second reader's test of 8a69b41 ("OnApplied runs once distMu is
// released"). That commit moves OnApplied out of distMu because a holder
// of its caller's locks may wait for distMu (a metrics scrape reading
// Stats). The informer's Logger is the user's code too, and it still runs
// with distMu held: refused() logs from upsertLocked/deleteLocked/
// removeLocked, and the compact side's decode logs from an Indexer called
// by the store under distMu. A log handler that counts its records
// through the same metrics provider (whose scrape holds its lock while
// calling the informer's Stats) closes a two-party cycle:
//
//	watch:  distMu        -> provider lock (the log handler counts the error)
//	scrape: provider lock -> distMu (Stats)
//
// The informer now keeps what it logs with distMu held (heldLogs) and
// gives it to the Logger once distMu is released. The tests do not
// deadlock: the log handler only looks whether distMu is held while it
// runs (TryLock on the typed informer's distMu; the call stack, which
// shows the function that holds it). Both failed on 8a69b41/9309afb.

var errReview2Refuse = errors.New("review2: refused")

// lockSpy is a slog.Handler that notes, for each record whose message
// contains match, whether distMu was held while the handler ran.
type lockSpy struct {
	match string
	inf   func() *Informer[*testPod] // typed informer whose distMu is tried; nil: stack only
	mu    *sync.Mutex
	held  *[]string // the stacks of the records logged with distMu held
	seen  chan struct{}
	once  *sync.Once
}

func newLockSpy(match string) lockSpy {
	return lockSpy{match: match, mu: &sync.Mutex{}, held: new([]string), seen: make(chan struct{}), once: &sync.Once{}}
}

func (h lockSpy) Enabled(context.Context, slog.Level) bool { return true }
func (h lockSpy) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h lockSpy) WithGroup(string) slog.Handler            { return h }

func (h lockSpy) Handle(_ context.Context, r slog.Record) error {
	if !strings.Contains(r.Message, h.match) {
		return nil
	}
	free := true
	if h.inf != nil {
		if inf := h.inf(); inf != nil {
			if free = inf.distMu.TryLock(); free {
				inf.distMu.Unlock()
			}
		}
	}
	stack := string(debug.Stack())
	underLock := false
	for _, fn := range []string{"applyLocking", "commitLocked", "restoreCommitLocked"} {
		underLock = underLock || strings.Contains(stack, fn)
	}
	h.mu.Lock()
	if !free || underLock {
		*h.held = append(*h.held, stack)
	}
	h.mu.Unlock()
	h.once.Do(func() { close(h.seen) })
	return nil
}

func (h lockSpy) check(t *testing.T, what string) {
	t.Helper()
	select {
	case <-h.seen:
	case <-time.After(waitLong): // a bound on a broken informer only; the check itself is not timed
		t.Fatalf("%s was not logged", what)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(*h.held) > 0 {
		t.Fatalf("the user's log handler ran with distMu held (%s); a scrape that holds the handler's lock "+
			"and reads Stats deadlocks with the watch goroutine. Stack:\n%s", what, (*h.held)[0])
	}
}

// TestReview2RefusedObjectIsLoggedWithDistMuHeld: a Transform refuses a
// watch event's object; "informer refused an object" is logged on the
// watch goroutine inside applyLocking, with distMu held.
func TestReview2RefusedObjectIsLoggedWithDistMuHeld(t *testing.T) {
	spy := newLockSpy("informer refused an object")
	var mu sync.Mutex
	var inf *Informer[*testPod]
	spy.inf = func() *Informer[*testPod] { mu.Lock(); defer mu.Unlock(); return inf }
	s := newScripted(t,
		answer(200, listJSON("10", "", podJSON("a", "5"))),
		stream(false, eventJSON("MODIFIED", podJSON("a", "11"))),
	)
	opts := fastOptions(s.srv.URL, t, ListPaged)
	opts.Store = StoreTyped
	opts.Logger = slog.New(spy)
	opts.Transform = func(p *testPod) (*testPod, error) {
		if p.ResourceVersion == "11" {
			return nil, errReview2Refuse
		}
		return p, nil
	}
	i, err := New(opts)
	require.NoError(t, err)
	mu.Lock()
	inf = i
	mu.Unlock()
	start(t, i)
	spy.check(t, "the refusal")
}

// TestReview2CompactDecodeErrorIsLoggedWithDistMuHeld: in StoreCompact an
// Indexer decodes each version as the store indexes it, under the inner
// informer's distMu; a version that does not decode is logged there.
func TestReview2CompactDecodeErrorIsLoggedWithDistMuHeld(t *testing.T) {
	bad := `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"11"},"spec":{"nodeName":5}}`
	spy := newLockSpy("could not decode")
	s := newScripted(t,
		answer(200, listJSON("10", "", podJSON("a", "5"))),
		stream(false, eventJSON("MODIFIED", bad)),
	)
	opts := compactOptions(t, s.srv.URL, ListPaged)
	opts.Logger = slog.New(spy)
	opts.Indexers = map[string]store.IndexFunc[*testPod]{
		"node": func(p *testPod) ([]string, error) { return []string{p.Spec.NodeName}, nil },
	}
	inf, err := New(opts)
	require.NoError(t, err)
	start(t, inf)
	spy.check(t, "the decode failure")
}
