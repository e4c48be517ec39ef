package controller

import (
	"context"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/kube"
)

// A second reader's test of 9309afb ("the expectations count and log only
// once e.mu is released: the provider and the log handler are the
// user's"). One call into the user's log handler was still made with e.mu
// held: observed calls cacheEntry.shows under e.mu, and for a delete
// shows read the cache with deleting=true (stateFunc), which in
// StoreCompact decoded the stored version (Store().Get) to read its
// deletionTimestamp. A version that does not decode into T, decoded there
// for the first time, was logged ("informer could not decode a stored
// object") by the manager's Logger, on the cache's goroutine, with e.mu
// held: a log handler that waits for anything a holder of e.mu waits for
// holds up every reconcile and every cache of the manager. stateFunc now
// reads the deletionTimestamp from the metadata alone.
//
// The interleaving: demo/target, with content T does not decode, is in
// the cache; the cache lags (the simulator holds its watch events);
// another writer modifies it; this process deletes it (the write is
// recorded: the cache holds the object and has not reached the delete's
// version); the lag ends; the cache applies the MODIFIED, OnApplied ->
// observed -> shows -> state(key, true). The log handler only looks
// whether e.mu is held (TryLock, and the stack); nothing deadlocks.

// review2BadCM decodes a ConfigMap only when every value of data is a
// number: "x" does not decode.
type review2BadCM struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Data              map[string]int `json:"data,omitempty"`
}

// review2Obj is the ConfigMap as the writer sees it.
type review2Obj struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Data              map[string]string `json:"data,omitempty"`
}

type review2MuSpy struct {
	match string
	mu    *sync.Mutex
	e     *func() *expectations
	held  *[]string
	seen  chan struct{}
	once  *sync.Once
}

func (h review2MuSpy) Enabled(context.Context, slog.Level) bool { return true }
func (h review2MuSpy) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h review2MuSpy) WithGroup(string) slog.Handler            { return h }

func (h review2MuSpy) Handle(_ context.Context, r slog.Record) error {
	if !strings.Contains(r.Message, h.match) {
		return nil
	}
	free := true
	if get := *h.e; get != nil {
		if e := get(); e != nil {
			if free = e.mu.TryLock(); free {
				e.mu.Unlock()
			}
		}
	}
	stack := string(debug.Stack())
	h.mu.Lock()
	if !free || strings.Contains(stack, "(*expectations)") {
		*h.held = append(*h.held, stack)
	}
	h.mu.Unlock()
	h.once.Do(func() { close(h.seen) })
	return nil
}

func TestReview2DecodeErrorIsLoggedWithExpectationsMuHeld(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	require.NoError(t, h.Server.EnsureNamespace("demo"))
	_, err := h.Server.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"target"},"data":{"a":"x"}}`))
	require.NoError(t, err)
	m, spy, _ := spiedManager(t, h)
	ctx := runSynced(t, m)

	require.NoError(t, h.Server.SetWatchLag("configmaps", time.Hour)) // the cache sees nothing new until released
	_, err = h.Server.Patch("configmaps", "demo", "target", []byte(`{"data":{"b":"y"}}`))
	require.NoError(t, err)
	cms := client.For(m.Client(), kube.Typed[*review2Obj](kube.ConfigMaps), client.Options{})
	require.NoError(t, cms.Delete(ctx, "demo", "target", client.DeleteOptions{}))
	ref := objRef{resKeyOf(kube.ConfigMaps), "demo/target"}
	waiting := func() bool {
		m.expect.mu.Lock()
		defer m.expect.mu.Unlock()
		_, ok := m.expect.objects[ref]
		return ok
	}
	require.True(t, waiting(), "the delete waits on the lagging cache")
	require.NoError(t, h.Server.SetWatchLag("configmaps", 0))
	// The cache has applied the MODIFIED and the DELETED once the delete
	// no longer waits (a bound on a broken run only; the check is not timed).
	require.Eventually(t, func() bool { return !waiting() }, waitLongReview2, 5*time.Millisecond)

	spy.mu.Lock()
	defer spy.mu.Unlock()
	if len(*spy.held) > 0 {
		t.Fatalf("the user's log handler ran with expectations.mu held. Stack:\n%s", (*spy.held)[0])
	}
}

const waitLongReview2 = 30 * time.Second

// spiedManager is a manager of namespace demo on h whose Logger is a
// review2MuSpy of "could not decode", with a cache of review2BadCM.
func spiedManager(t *testing.T, h *simkit.Harness) (*Manager, review2MuSpy, *Reader[*review2BadCM]) {
	t.Helper()
	c, err := kube.NewClient(&kube.Config{Host: h.URL})
	require.NoError(t, err)
	var getE func() *expectations
	spy := review2MuSpy{match: "could not decode", mu: &sync.Mutex{}, e: &getE, held: new([]string),
		seen: make(chan struct{}), once: &sync.Once{}}
	m, err := NewManager(c, ManagerOptions{Namespace: "demo", Logger: slog.New(spy)})
	require.NoError(t, err)
	getE = func() *expectations { return m.expect }
	r, err := CacheIn(m, kube.Typed[*review2BadCM](kube.ConfigMaps), kube.Scope{})
	require.NoError(t, err)
	return m, spy, r
}

// runSynced runs m until the test ends, waits for its first sync and
// returns the context it runs in.
func runSynced(t *testing.T, m *Manager) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	require.Eventually(t, m.Synced, waitLongReview2, 5*time.Millisecond) // a bound on a broken run only
	return ctx
}
