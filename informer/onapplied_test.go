package informer

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// appliedLog records OnApplied calls with what the store held at each,
// and checks that a handler is told of a change only after OnApplied was.
type appliedLog struct {
	mu   sync.Mutex
	inf  *Informer[*testPod]
	got  []string        // "key@rv" or "key@absent", in call order
	seen map[string]bool // the same, as a set
	late []string        // handler calls that came before their OnApplied
	done chan struct{}
	want int
}

func (a *appliedLog) onApplied(key string) {
	state := "absent"
	if p, ok := a.inf.Store().Get(key); ok {
		state = p.ResourceVersion
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, key+"@"+state)
	a.seen[key+"@"+state] = true
	if len(a.got) == a.want {
		close(a.done)
	}
}

func (a *appliedLog) told(p *testPod, gone bool) {
	entry := key(p) + "@" + p.ResourceVersion
	if gone {
		entry = key(p) + "@absent"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.seen[entry] {
		a.late = append(a.late, entry)
	}
}

func (a *appliedLog) get() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.got)
}

func (a *appliedLog) getLate() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.late)
}

func (a *appliedLog) OnAdd(p *testPod, _ bool)    { a.told(p, false) }
func (a *appliedLog) OnUpdate(_, p *testPod)      { a.told(p, false) }
func (a *appliedLog) OnDelete(p *testPod, _ bool) { a.told(p, true) }

// TestOnAppliedSeesEachChangeInTheStore: OnApplied gets the key of every
// change of a list, the watch and a relist (not of a relist's unchanged
// objects), once the store holds it and before a handler is told, with
// both stores.
func TestOnAppliedSeesEachChangeInTheStore(t *testing.T) {
	for _, mode := range []StoreMode{StoreDefault, StoreTyped} {
		a := &appliedLog{seen: map[string]bool{}, done: make(chan struct{}), want: 9}
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
		for _, h := range []Handler[*testPod]{rec, a} {
			_, err = inf.AddHandler(h, HandlerOptions{})
			require.NoError(t, err)
		}
		start(t, inf)
		select {
		case <-a.done:
		case <-time.After(waitLong):
			t.Fatalf("store %v: OnApplied called %d times, want %d", mode, len(a.get()), a.want)
		}
		require.Eventually(t, func() bool { return len(rec.get()) == 9 }, waitLong, tick)
		got, late := a.get(), a.getLate()
		require.Len(t, got, 9, "store %v", mode)
		slices.Sort(got[:3])  // a list's order is the store's
		slices.Sort(got[6:9]) // so is a relist's
		require.Equal(t, []string{"ns/a@5", "ns/b@6", "ns/c@7", "ns/a@20", "ns/b@absent", "ns/e@22",
			"ns/c@30", "ns/d@31", "ns/e@absent"}, got, "store %v", mode)
		require.Empty(t, late, "store %v: handlers told before OnApplied", mode)
	}
}
