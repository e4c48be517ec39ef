package informer

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/watch"
)

// gatedRecorder is a recorderT whose first call waits for open.
type gatedRecorder struct {
	recorderT
	open  chan struct{}
	first bool
}

func (g *gatedRecorder) OnAdd(p *testPod, initial bool) {
	if !g.first {
		g.first = true
		<-g.open
	}
	g.recorderT.OnAdd(p, initial)
}

// aheadSetup is a compact side and the queue of a typed handler of it,
// holding adds of n pods.
func aheadSetup(t *testing.T, n int) (*compactSide[*testPod], *handlerQueue[*watch.Raw], *gatedRecorder) {
	t.Helper()
	c := &compactSide[*testPod]{codec: watch.NewRawCodec[*testPod](), cache: newDecodeCache[*testPod](0)}
	rec := &gatedRecorder{open: make(chan struct{})}
	q := newHandlerQueue[*watch.Raw](c.handler(rec), false, quietLogger())
	for i := range n {
		r := new(watch.Raw)
		require.NoError(t, r.UnmarshalJSON([]byte(podJSON(fmt.Sprintf("p%03d", i), "5"))))
		q.add(fmt.Sprintf("ns/p%03d", i), r, true)
	}
	return c, q, rec
}

// TestAheadDecodesABacklogOnce: the queue of a typed handler of a compact
// store with a backlog is decoded by helpers as well as by the handler's
// own goroutine, so that it uses more than one core, and still no
// version is decoded twice.
func TestAheadDecodesABacklogOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	synctest.Test(t, func(t *testing.T) {
		const n = 300
		c, q, rec := aheadSetup(t, n)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { q.run(ctx); close(done) }()

		// The handler is in its first call; the helpers did their share
		// of the queue as far as they may go, and wait.
		synctest.Wait()
		helped := c.cache.len() - 1
		require.Positive(t, helped, "helpers decoded ahead of the handler")
		require.LessOrEqual(t, helped, aheadReach*(maxAheadHelpers+1), "no further than they may go")
		require.EqualValues(t, 1+helped, c.decodes.Load())

		close(rec.open)
		synctest.Wait()
		got := rec.get()
		require.Len(t, got, n)
		for i, call := range got {
			require.Equal(t, fmt.Sprintf("add ns/p%03d@5 initial", i), call, "in order")
		}
		require.EqualValues(t, n, c.decodes.Load(), "every version decoded once")
		cancel()
		<-done
	})
}

// TestAheadNeedsABacklog: a handler that keeps up starts no helper.
func TestAheadNeedsABacklog(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	synctest.Test(t, func(t *testing.T) {
		c, q, rec := aheadSetup(t, aheadBacklog)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { q.run(ctx); close(done) }()
		synctest.Wait()
		require.Equal(t, 1, c.cache.len(), "only the handler's own decode")
		close(rec.open)
		synctest.Wait()
		require.Len(t, rec.get(), aheadBacklog)
		cancel()
		<-done
	})
}
