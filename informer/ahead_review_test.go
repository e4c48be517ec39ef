package informer

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/watch"
)

// aheadSetupWith is aheadSetup with a decode cache of cacheN
// (Options.DecodeCache) and a raw informer logging to log, so that a
// version that does not decode takes the error path.
func aheadSetupWith(t *testing.T, n, cacheN int, log *slog.Logger, body func(i int) string) (*compactSide[*testPod], *handlerQueue[*watch.Raw], *gatedRecorder) {
	t.Helper()
	c := &compactSide[*testPod]{codec: watch.NewRawCodec[*testPod](), cache: newDecodeCache[*testPod](cacheN),
		raw: &Informer[*watch.Raw]{opts: Options[*watch.Raw]{Logger: log}}}
	rec := &gatedRecorder{open: make(chan struct{})}
	q := newHandlerQueue[*watch.Raw](c.handler(rec), false, quietLogger())
	for i := range n {
		r := new(watch.Raw)
		require.NoError(t, r.UnmarshalJSON([]byte(body(i))))
		q.add(fmt.Sprintf("ns/p%03d", i), r, true)
	}
	return c, q, rec
}

func goodPod(i int) string { return podJSON(fmt.Sprintf("p%03d", i), "5") }

// runGated runs q until everything is delivered, the handler's first call
// held until the helpers have done what they may.
func runGated(t *testing.T, q *handlerQueue[*watch.Raw], rec *gatedRecorder) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { q.run(ctx); close(done) }()
	synctest.Wait()
	close(rec.open)
	synctest.Wait()
	cancel()
	<-done
}

// TestAheadWithoutCacheDecodesOnce: with no decode cache (DecodeCache < 0)
// what a helper decodes is thrown away and decoded again by the handler:
// helpers must not run.
func TestAheadWithoutCacheDecodesOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	synctest.Test(t, func(t *testing.T) {
		const n = 100
		c, q, rec := aheadSetupWith(t, n, -1, quietLogger(), goodPod)
		runGated(t, q, rec)
		require.Len(t, rec.get(), n)
		require.EqualValues(t, n, c.decodes.Load(), "every version decoded once")
	})
}

// TestAheadWithinASmallCache: a fixed cache smaller than the helpers'
// reach loses what they decode before the handler asks for it (and
// evicts what readers use).
func TestAheadWithinASmallCache(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	synctest.Test(t, func(t *testing.T) {
		const n = 300
		c, q, rec := aheadSetupWith(t, n, 8, quietLogger(), goodPod)
		runGated(t, q, rec)
		require.Len(t, rec.get(), n)
		require.EqualValues(t, n, c.decodes.Load(), "every version decoded once")
	})
}

// TestAheadReadsAreNotReaderReads: a version a helper decoded and the
// handler then read once is a one-off read, as without helpers: not
// marked for CLOCK's second chance, and counted once in the sizing
// window.
func TestAheadReadsAreNotReaderReads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	synctest.Test(t, func(t *testing.T) {
		const n = 300
		c, q, rec := aheadSetupWith(t, n, 0, quietLogger(), goodPod)
		runGated(t, q, rec)
		require.Len(t, rec.get(), n)
		c.cache.mu.Lock()
		defer c.cache.mu.Unlock()
		marked := 0
		for _, s := range c.cache.ring {
			if s.raw != nil && s.ref {
				marked++
			}
		}
		require.Zero(t, marked, "no version was read twice")
		require.Equal(t, n, c.cache.reads, "one read per version")
	})
}

// panicHandler is a slog handler that panics on Error.
type panicHandler struct{ slog.Handler }

func (panicHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h panicHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		panic("logger: " + r.Message)
	}
	return nil
}

// TestAheadSurvivesAPanic: what panics on a helper (here the Logger, on
// a version that does not decode) must not end the process: without
// helpers it is the handler's call that panics, recovered and counted.
func TestAheadSurvivesAPanic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	synctest.Test(t, func(t *testing.T) {
		const n = 40
		bad := func(i int) bool { return i%4 != 0 && i > 8 } // helpers' shares
		body := func(i int) string {
			if bad(i) {
				return fmt.Sprintf(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p%03d","namespace":"ns","resourceVersion":"5"},"spec":7}`, i)
			}
			return goodPod(i)
		}
		c, q, rec := aheadSetupWith(t, n, 0, slog.New(panicHandler{}), body)
		runGated(t, q, rec)
		var want []string
		nbad := 0
		for i := range n {
			if bad(i) {
				nbad++
				continue
			}
			want = append(want, fmt.Sprintf("add ns/p%03d@5 initial", i))
		}
		require.Equal(t, want, rec.get())
		require.EqualValues(t, nbad, q.panics.Load(), "each bad version's call panicked, as without helpers")
		_ = c
	})
}

// TestAheadSameCalls: the handler's calls, over adds, updates and deletes
// of versions that do and do not decode (the decodingHandler's given
// map at work across two rounds), are the same with helpers as without.
func TestAheadSameCalls(t *testing.T) {
	calls := func(procs int) ([]string, int64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		var got []string
		var decodes int64
		synctest.Test(t, func(t *testing.T) {
			c, q, rec := aheadSetupWith(t, 0, 0, quietLogger(), goodPod)
			raw := func(i, rv int, ok bool) *watch.Raw {
				s := podJSON(fmt.Sprintf("p%03d", i), fmt.Sprint(rv))
				if !ok {
					s = fmt.Sprintf(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p%03d","namespace":"ns","resourceVersion":"%d"},"spec":7}`, i, rv)
				}
				r := new(watch.Raw)
				require.NoError(t, r.UnmarshalJSON([]byte(s)))
				return r
			}
			const n = 120
			v1 := make([]*watch.Raw, n)
			for i := range n {
				v1[i] = raw(i, 1, i%3 != 1)
				q.add(fmt.Sprintf("ns/p%03d", i), v1[i], true)
			}
			runGated(t, q, rec)
			rec.first, rec.open = false, make(chan struct{})
			for i := range n {
				k := fmt.Sprintf("ns/p%03d", i)
				v2 := raw(i, 2, i%5 != 2)
				switch i % 4 {
				case 0, 1:
					q.update(k, v1[i], v2)
				case 2:
					q.remove(k, v1[i], v2, false)
				case 3:
					q.update(k, v1[i], v2)
					q.update(k, v2, raw(i, 3, i%2 == 0))
				}
			}
			runGated(t, q, rec)
			got, decodes = rec.get(), c.decodes.Load()
		})
		return got, decodes
	}
	alone, d1 := calls(1)
	helped, d4 := calls(4)
	require.Equal(t, alone, helped)
	t.Logf("decodes without helpers %d, with %d", d1, d4)
}
