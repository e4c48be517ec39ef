package leader

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// A hold that ends with a known outcome while the term holds is no cut;
// one whose outcome is unknown, one whose own context ended first, and
// one still open when the term ends are, each at its instant (the last
// at the term's end, however late its done comes).
func TestHoldCuts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		term := NewTerm(start.Add(time.Minute))

		ctx, done := term.Hold(context.Background())
		require.NoError(t, ctx.Err())
		require.False(t, done(false), "an answered write is no cut")
		require.True(t, term.LastCut().IsZero())

		time.Sleep(time.Second)
		_, done = term.Hold(context.Background())
		require.True(t, done(true), "an unknown outcome is a cut")
		require.True(t, done(false), "done again reports the first answer")
		require.Equal(t, start.Add(time.Second), term.LastCut())

		time.Sleep(time.Second)
		short, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, done = term.Hold(short)
		time.Sleep(2 * time.Second)
		require.True(t, done(false), "a hold whose own deadline passed first is a cut")
		require.Equal(t, start.Add(4*time.Second), term.LastCut())

		ctx, done = term.Hold(context.Background())
		time.Sleep(time.Second)
		term.End(errReleased)
		synctest.Wait()
		require.ErrorIs(t, context.Cause(ctx), errReleased, "the hold's context ends with the term")
		time.Sleep(3 * time.Second)
		require.True(t, done(false), "a hold open at the term's end is a cut")
		require.Equal(t, start.Add(5*time.Second), term.LastCut(), "cut at the end, not at the late done")

		ctx, done = term.Hold(context.Background())
		require.Error(t, ctx.Err(), "a hold of an ended term is cancelled")
		time.Sleep(time.Second)
		require.True(t, done(false), "cut, at the term's end")
		require.Equal(t, start.Add(5*time.Second), term.LastCut())
	})
}

// AwaitMargin waits the margin after the last cut, and not at all
// without one.
func TestAwaitMargin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		term := NewTerm(time.Now().Add(time.Minute))
		t0 := time.Now()
		term.End(errReleased)
		term.AwaitMargin(5*time.Second, slog.New(slog.DiscardHandler))
		require.Equal(t, t0, time.Now(), "no cut: no wait")

		term = NewTerm(time.Now().Add(time.Minute))
		_, done := term.Hold(context.Background())
		done(true)
		time.Sleep(2 * time.Second)
		term.End(errReleased)
		term.AwaitMargin(5*time.Second, slog.New(slog.DiscardHandler))
		require.Equal(t, t0.Add(5*time.Second), time.Now(), "the margin after the cut")
	})
}
