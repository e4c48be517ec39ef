package informer

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/watch"
)

// TestDecodeFlight: while one reader decodes a version, a second one
// finds its flight and gets what the first decoded; once landed, the
// version is cached; an aborted flight gives its waiters the error and
// caches nothing.
func TestDecodeFlight(t *testing.T) {
	c := newDecodeCache[*testPod](0)
	r := new(watch.Raw)
	_, _, f, mine := c.begin(r)
	require.True(t, mine, "the first reader decodes")
	_, _, other, mine2 := c.begin(r)
	require.False(t, mine2)
	require.Same(t, f, other, "the second finds the first's flight")
	pod := &testPod{}
	c.land(r, f, pod, nil)
	<-other.done
	require.Same(t, pod, other.obj)
	got, err, f3, mine3 := c.begin(r)
	require.False(t, mine3)
	require.Nil(t, f3, "landed: cached")
	require.NoError(t, err)
	require.Same(t, pod, got)

	r2 := new(watch.Raw)
	_, _, f4, _ := c.begin(r2)
	_, _, waiter, _ := c.begin(r2)
	boom := errors.New("boom")
	c.abort(r2, f4, boom)
	<-waiter.done
	require.ErrorIs(t, waiter.err, boom)
	_, _, _, mine5 := c.begin(r2)
	require.True(t, mine5, "an aborted decode is not cached")
}

// TestNilDecodeCacheHasNoFlights: without a cache every reader decodes.
func TestNilDecodeCacheHasNoFlights(t *testing.T) {
	var c *decodeCache[*testPod]
	r := new(watch.Raw)
	for range 2 {
		_, _, f, mine := c.begin(r)
		require.True(t, mine)
		require.Nil(t, f)
	}
}
