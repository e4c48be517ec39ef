package leader

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// stuckHandler is a slog handler that blocks every caller while stuck:
// a log sink that stopped draining, which freezes the goroutine that
// logs (here the elector's, at its first failed renew).
type stuckHandler struct {
	mu    sync.Mutex
	stuck chan struct{} // nil: not stuck
}

func (h *stuckHandler) set(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case on && h.stuck == nil:
		h.stuck = make(chan struct{})
	case !on && h.stuck != nil:
		close(h.stuck)
		h.stuck = nil
	}
}

func (h *stuckHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *stuckHandler) Handle(context.Context, slog.Record) error {
	h.mu.Lock()
	ch := h.stuck
	h.mu.Unlock()
	if ch != nil {
		<-ch
	}
	return nil
}
func (h *stuckHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *stuckHandler) WithGroup(string) slog.Handler      { return h }

// TestFrozenElectorStopsAtDeadline: the leader's renews fail and its
// goroutine is frozen (its log handler blocks on the first failure), so
// its loop never sees the renew deadline pass. The leading function's
// context is still cancelled within RenewDeadline of the last renew, and
// IsLeader turns false then, by the term's timer and the clock alone.
func TestFrozenElectorStopsAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t)
		h := &stuckHandler{}
		a := c.runCandidate("a", func(cfg *Config) { cfg.Logger = slog.New(h) })
		time.Sleep(5 * time.Second)
		require.True(t, a.e.IsLeader())
		h.set(true)
		t.Cleanup(func() { h.set(false) })
		failed := time.Now()
		_, err := c.srv.InjectFaultTracked(sim.Fault{Type: sim.FaultError, Code: 500, Match: "write",
			Resource: "leases.coordination.k8s.io", Count: -1})
		require.NoError(t, err)
		for {
			if _, stopped := a.times(); len(stopped) > 0 {
				require.LessOrEqual(t, stopped[0].Sub(failed), DefaultRenewDeadline,
					"the leading context is cancelled at the renew deadline though the elector is frozen")
				break
			}
			require.Less(t, time.Since(failed), time.Minute, "the leading context was never cancelled")
			time.Sleep(100 * time.Millisecond)
		}
		require.False(t, a.e.IsLeader(), "not leading past the deadline, though Run has not noticed")
		h.set(false)
		require.ErrorIs(t, a.stop(), ErrLost)
	})
}
