package queue

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestTokenBucketBurstThenRate(t *testing.T) {
	b, err := NewTokenBucket(BucketOptions{})
	require.NoError(t, err)
	require.Equal(t, DefaultBucketRate, b.Rate())
	require.Equal(t, DefaultBucketBurst, b.Burst())
	for i := range DefaultBucketBurst {
		if got := b.ReserveAt(t0); got != 0 {
			t.Fatalf("reservation %d within the burst waits %v, want 0", i+1, got)
		}
	}
	tests := []struct {
		at   time.Duration // since t0
		want time.Duration
	}{
		{0, 100 * time.Millisecond},                      // tokens -1: one borrowed, 1/10 s away
		{0, 200 * time.Millisecond},                      // tokens -2
		{100 * time.Millisecond, 200 * time.Millisecond}, // -2 + 1 refilled - 1 = -2
		{time.Second, 0},                                 // -2 + 9 refilled - 1 = 6: no wait
	}
	for i, tt := range tests {
		if got := b.ReserveAt(t0.Add(tt.at)); got != tt.want {
			t.Errorf("row %d: ReserveAt(t0+%v) = %v, want %v", i, tt.at, got, tt.want)
		}
	}
	if got, want := b.TokensAt(t0.Add(time.Second)), 6.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("TokensAt(t0+1s) = %v, want %v", got, want)
	}
}

func TestTokenBucketRefillIsCappedAtBurst(t *testing.T) {
	b, err := NewTokenBucket(BucketOptions{Rate: 2, Burst: 3})
	require.NoError(t, err)
	for range 3 {
		b.ReserveAt(t0)
	}
	tests := []struct {
		at   time.Duration
		want float64
	}{
		{0, 0},
		{500 * time.Millisecond, 1},
		{time.Second, 2},
		{time.Hour, 3},
	}
	for _, tt := range tests {
		if got := b.TokensAt(t0.Add(tt.at)); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("TokensAt(t0+%v) = %v, want %v", tt.at, got, tt.want)
		}
	}
}

func TestTokenBucketTimeGoingBackwardsAddsNothing(t *testing.T) {
	b, err := NewTokenBucket(BucketOptions{Rate: 1, Burst: 1})
	require.NoError(t, err)
	require.Equal(t, time.Duration(0), b.ReserveAt(t0.Add(time.Hour)))
	if got, want := b.ReserveAt(t0), time.Second; got != want {
		t.Errorf("ReserveAt(earlier time) = %v, want %v: no tokens for going back", got, want)
	}
	if got, want := b.TokensAt(t0.Add(time.Hour+time.Second)), 0.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("TokensAt(last+1s) = %v, want %v", got, want)
	}
}

func TestTokenBucketInfiniteRateNeverWaits(t *testing.T) {
	b, err := NewTokenBucket(BucketOptions{Rate: math.Inf(1), Burst: 1})
	require.NoError(t, err)
	for range 1000 {
		if got := b.ReserveAt(t0); got != 0 {
			t.Fatalf("ReserveAt with infinite rate = %v, want 0", got)
		}
	}
}

func TestTokenBucketWaitIsCapped(t *testing.T) {
	b, err := NewTokenBucket(BucketOptions{Rate: 1e-300, Burst: 1})
	require.NoError(t, err)
	b.ReserveAt(t0)
	if got, want := b.ReserveAt(t0), time.Duration(math.MaxInt64); got != want {
		t.Errorf("ReserveAt with a vanishing rate = %v, want the largest duration %v", got, want)
	}
}

func TestTokenBucketZeroValueUsesDefaultsAndClock(t *testing.T) {
	clock := newFakeClock()
	b := &TokenBucket{clock: clock}
	for range DefaultBucketBurst {
		require.Equal(t, time.Duration(0), b.Reserve())
	}
	require.Equal(t, 100*time.Millisecond, b.Reserve())
	clock.Step(time.Second)
	if got, want := b.Tokens(), 9.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("Tokens() after 1s = %v, want %v", got, want)
	}
	var zero TokenBucket // the real clock: only check it does not fail
	require.Equal(t, time.Duration(0), zero.Reserve())
}

func TestNewTokenBucketRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name  string
		opts  BucketOptions
		field string
	}{
		{"negative rate", BucketOptions{Rate: -1}, "BucketOptions.Rate"},
		{"NaN rate", BucketOptions{Rate: math.NaN()}, "BucketOptions.Rate"},
		{"negative burst", BucketOptions{Burst: -5}, "BucketOptions.Burst"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewTokenBucket(tt.opts)
			var oe *OptionError
			require.True(t, errors.As(err, &oe), "error %v is not an *OptionError", err)
			if oe.Field != tt.field {
				t.Errorf("OptionError.Field = %q, want %q", oe.Field, tt.field)
			}
		})
	}
}

func TestTokenBucketBorrowsLikeRateLimiter(t *testing.T) {
	// The same schedule through TokenBucket and through the rules it
	// states: wait = borrowed tokens / rate, refill capped at burst.
	b, err := NewTokenBucket(BucketOptions{Rate: 4, Burst: 2})
	require.NoError(t, err)
	tests := []struct {
		at   time.Duration
		want time.Duration
	}{
		{0, 0},
		{0, 0},
		{0, 250 * time.Millisecond}, // tokens -1
		{0, 500 * time.Millisecond}, // -2
		{250 * time.Millisecond, 500 * time.Millisecond}, // -2 + 1 - 1
		{10 * time.Second, 0},                            // refilled to the burst, then 1 left
		{10 * time.Second, 0},                            // 0 left
		{10 * time.Second, 250 * time.Millisecond},       // -1
	}
	for i, tt := range tests {
		if got := b.ReserveAt(t0.Add(tt.at)); got != tt.want {
			t.Errorf("row %d: ReserveAt(t0+%v) = %v, want %v", i, tt.at, got, tt.want)
		}
	}
}

func TestTokenBucketInfiniteRateTokensAreTheBurst(t *testing.T) {
	b, err := NewTokenBucket(BucketOptions{Rate: math.Inf(1), Burst: 7})
	require.NoError(t, err)
	b.ReserveAt(t0)
	if got := b.TokensAt(t0); got != 7 {
		t.Errorf("TokensAt with infinite rate = %v, want the burst 7", got)
	}
}

func TestTokenBucketTokensAtEarlierTimeAddsNothingLater(t *testing.T) {
	b, err := NewTokenBucket(BucketOptions{Rate: 1, Burst: 1})
	require.NoError(t, err)
	b.ReserveAt(t0.Add(time.Hour))
	b.TokensAt(t0) // an earlier read must not move the bucket's time back
	if got := b.TokensAt(t0.Add(time.Hour)); math.Abs(got) > 1e-9 {
		t.Errorf("TokensAt(last) after reading an earlier time = %v, want 0", got)
	}
}
