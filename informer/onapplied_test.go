package informer

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// appliedLog records OnApplied calls with what the store held at each.
type appliedLog struct {
	mu   sync.Mutex
	inf  *Informer[*testPod]
	got  []string // "key@rv" or "key@absent", in call order
	done chan struct{}
	want int
}

func (a *appliedLog) onApplied(key string) {
	// Stats takes the lock the informer applies changes under: OnApplied
	// runs without it (its caller's locks may be waited on by a holder of
	// that lock: a metrics scrape reading Stats).
	_ = a.inf.Stats()
	state := "absent"
	if p, ok := a.inf.Store().Get(key); ok {
		state = p.ResourceVersion
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, key+"@"+state)
	if len(a.got) == a.want {
		close(a.done)
	}
}

func (a *appliedLog) get() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.got)
}

// TestOnAppliedSeesEachChangeInTheStore: OnApplied gets the key of every
// change of a list, the watch and a relist (not of a relist's unchanged
// objects), once the store holds it and before the next change, with none
// of the informer's locks held, with both stores.
func TestOnAppliedSeesEachChangeInTheStore(t *testing.T) {
	for _, mode := range []StoreMode{StoreDefault, StoreTyped} {
		a := &appliedLog{done: make(chan struct{}), want: 9}
		rec := &recorderT{}
		s := newScripted(t,
			answer(200, listJSON("10", "", podJSON("a", "5"), podJSON("b", "6"), podJSON("c", "7"))),
			when(rec.count(3), stream(true, eventJSON("MODIFIED", podJSON("a", "20")),
				eventJSON("DELETED", podJSON("b", "21")), eventJSON("ADDED", podJSON("e", "22")),
				eventJSON("ERROR", statusJSON(410, "Expired")))),
			when(rec.count(6), answer(200, listJSON("40", "", podJSON("a", "20"), podJSON("c", "30"), podJSON("d", "31")))),
			stream(false),
		)
		opts := fastOptions(s.srv.URL, t, ListPaged)
		opts.Store, opts.OnApplied = mode, a.onApplied
		inf, err := New(opts)
		require.NoError(t, err)
		a.inf = inf
		_, err = inf.AddHandler(rec, HandlerOptions{})
		require.NoError(t, err)
		start(t, inf)
		select {
		case <-a.done:
		case <-time.After(waitLong):
			t.Fatalf("store %v: OnApplied called %d times, want %d", mode, len(a.get()), a.want)
		}
		require.Eventually(t, func() bool { return len(rec.get()) == 9 }, waitLong, tick)
		got := a.get()
		require.Len(t, got, 9, "store %v", mode)
		slices.Sort(got[:3])  // a list's order is the store's
		slices.Sort(got[6:9]) // so is a relist's
		require.Equal(t, []string{"ns/a@5", "ns/b@6", "ns/c@7", "ns/a@20", "ns/b@absent", "ns/e@22",
			"ns/c@30", "ns/d@31", "ns/e@absent"}, got, "store %v", mode)
	}
}

// TestOnAppliedPanicIsCountedAndTheWatchGoesOn: a panic in OnApplied is
// the user's, on the watch's goroutine; the informer logs and counts it
// and applies the changes after it, with both stores.
func TestOnAppliedPanicIsCountedAndTheWatchGoesOn(t *testing.T) {
	for _, mode := range []StoreMode{StoreDefault, StoreTyped} {
		var mu sync.Mutex
		var got []string
		done := make(chan struct{})
		s := newScripted(t,
			answer(200, listJSON("10", "", podJSON("a", "5"))),
			stream(true, eventJSON("MODIFIED", podJSON("a", "20")), eventJSON("ADDED", podJSON("b", "22"))),
			stream(false),
		)
		opts := fastOptions(s.srv.URL, t, ListPaged)
		opts.Store = mode
		opts.OnApplied = func(key string) {
			mu.Lock()
			got = append(got, key)
			n := len(got)
			mu.Unlock()
			switch n {
			case 2:
				panic("boom")
			case 3:
				close(done)
			}
		}
		inf, err := New(opts)
		require.NoError(t, err)
		start(t, inf)
		select {
		case <-done:
		case <-time.After(waitLong):
			t.Fatalf("store %v: the watch stopped after OnApplied panicked", mode)
		}
		mu.Lock()
		require.Equal(t, []string{"ns/a", "ns/a", "ns/b"}, got, "store %v", mode)
		mu.Unlock()
		require.EqualValues(t, 1, inf.Stats().HandlerPanics, "store %v", mode)
		p, ok := inf.Store().Get("ns/b")
		require.True(t, ok, "store %v", mode)
		require.Equal(t, "22", p.ResourceVersion, "store %v", mode)
	}
}
