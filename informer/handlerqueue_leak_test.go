package informer

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// A handler that stays a few changes behind the informer never lets its
// queue drain, and then the FIFO's delivered prefix is never reclaimed:
// it grows with the number of changes, not of keys, contrary to
// handlerQueue's bound (its size is bounded by the number of distinct
// keys with pending work) and compactLocked's (the FIFO stays within
// twice the number of pending keys). 100,000 changes over 3 keys, with
// the handler popping one per change, must not need 100,000 entries.
func TestHandlerQueueBoundedWhileNeverDrained(t *testing.T) {
	q := newHandlerQueue[*obj](&recorder{}, false, slog.Default())
	keys := []string{"a", "b", "c"}
	q.update("a", &obj{"a", "0"}, &obj{"a", "1"}) // two changes behind
	q.update("b", &obj{"b", "0"}, &obj{"b", "1"})
	for i := range 100000 {
		k := keys[(i+2)%len(keys)] // the one key not pending: a new FIFO entry
		q.update(k, &obj{k, "0"}, &obj{k, fmt.Sprint(i)})
		_, ok := q.pop()
		require.True(t, ok)
		q.delivered()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	require.Equal(t, 2, len(q.items), "pending keys")
	require.LessOrEqual(t, len(q.fifo), 2*len(q.items)+64+1,
		"fifo holds %d entries (%d delivered, cap %d) for %d pending keys", len(q.fifo), q.head, cap(q.fifo), len(q.items))
}
