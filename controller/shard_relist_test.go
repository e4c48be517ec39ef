package controller

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/backoff"
)

// TestRelistOncePerBarrierRetriedWithBackoff: the list of the others'
// objects runs once per barrier passed, also when a barrier brings back
// a ring version listed before (the count moves, not the version); a
// failed list is due again only after its backoff, which grows, and a
// new barrier lists at once.
func TestRelistOncePerBarrierRetriedWithBackoff(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var r relist
	require.False(t, r.dueAt(0, t0), "no barrier yet")
	require.True(t, r.dueAt(1, t0))
	r.doneAt(1, nil, t0)
	require.False(t, r.dueAt(1, t0.Add(time.Hour)), "listed for this barrier")
	require.True(t, r.pending().IsZero())

	r.backoff = backoff.New(backoff.Options{Jitter: -1})
	fail := errors.New("500")
	require.True(t, r.dueAt(2, t0))
	now := t0
	for _, wait := range []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond} {
		r.doneAt(2, fail, now)
		require.Equal(t, now.Add(wait), r.pending())
		require.False(t, r.dueAt(2, now.Add(wait-time.Millisecond)), "retried after its backoff, not before")
		now = now.Add(wait)
		require.True(t, r.dueAt(2, now))
	}
	require.True(t, r.dueAt(3, now.Add(-time.Second)), "a new barrier lists at once")
	r.doneAt(3, nil, now)
	require.True(t, r.pending().IsZero())
	require.False(t, r.dueAt(3, now))
	require.True(t, r.dueAt(4, now), "the ring came back: a barrier with the old version is a new one")
}
