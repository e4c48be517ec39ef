package ratelimit

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestReserveAtBorrowsFromTheFuture(t *testing.T) {
	b := New(10, 2) // a token every 100 ms
	tests := []struct {
		at   time.Duration
		want time.Duration
	}{
		{0, 0}, {0, 0}, // the burst
		{0, 100 * time.Millisecond}, // borrowed
		{0, 200 * time.Millisecond}, // borrowed further
		{300 * time.Millisecond, 0}, // the refill caught up
		{300 * time.Millisecond, 100 * time.Millisecond},
		{100 * time.Millisecond, 200 * time.Millisecond}, // a time before the latest counts as the latest
	}
	for i, tc := range tests {
		got := b.ReserveAt(t0.Add(tc.at))
		require.Equal(t, tc.want, got, "reservation %d at +%v", i, tc.at)
	}
}

func TestBackwardsTimeCreditsNothing(t *testing.T) {
	b := New(1, 1)
	require.True(t, b.AllowAt(t0.Add(time.Second)))
	require.False(t, b.AllowAt(t0), "going back does not refill")
	require.False(t, b.AllowAt(t0.Add(time.Second)), "nor does coming forward again to the same time")
	require.True(t, b.AllowAt(t0.Add(2*time.Second)))
}

func TestFreeAndNil(t *testing.T) {
	free := New(math.Inf(1), 5)
	var none *Bucket
	for _, b := range []*Bucket{free, none} {
		for range 100 {
			require.Zero(t, b.ReserveAt(t0))
			require.True(t, b.AllowAt(t0))
		}
		require.True(t, b.Full(t0))
		require.NoError(t, b.Wait(context.Background(), 1000))
	}
	require.Equal(t, 5.0, free.TokensAt(t0), "free tokens count as a full burst")
}

func TestFullAfterRefill(t *testing.T) {
	b := New(Every(time.Second), 2)
	require.True(t, b.Full(t0))
	require.True(t, b.AllowAt(t0))
	require.False(t, b.Full(t0))
	require.False(t, b.Full(t0.Add(500*time.Millisecond)))
	require.True(t, b.Full(t0.Add(time.Second)))
}

func TestEvery(t *testing.T) {
	require.Equal(t, 4.0, Every(250*time.Millisecond))
	require.True(t, math.IsInf(Every(0), 1))
}

// TestWaitBeyondTheBurst takes more tokens than the burst holds: it is
// paced, burst by burst, rather than refused.
func TestWaitBeyondTheBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(100, 100)
		start := time.Now()
		require.NoError(t, b.Wait(context.Background(), 350))
		// 100 at once, then 250 more at 100 a second.
		require.Equal(t, 2500*time.Millisecond, time.Since(start))
	})
}

func TestWaitEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New(1, 1)
		require.NoError(t, b.Wait(context.Background(), 1))
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		require.Error(t, b.Wait(ctx, 1), "the next token comes after the deadline")
	})
}
