package suite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/internal/conformance/harness"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
)

// lossLease is the election Lease of testLostLeaseFences.
const lossLease = "conformance-loss"

// lossRecord is testLostLeaseFences's record, kept outside the code
// under test: the reconcile starts and context cancels its reconciler
// saw, the writes it had refused by the fence, and, from each replica's
// proxy, the ConfigMap writes the server answered. Safe for concurrent
// use.
type lossRecord struct {
	mu        sync.Mutex
	starts    map[string][]time.Time // replica -> its reconcile starts
	cancelled map[string][]time.Time // replica -> its reconcile contexts' cancels
	writes    map[string][]time.Time // replica -> its ConfigMap writes the server answered 2xx
	tried     map[string][]time.Time // replica -> when its reconciler's writes returned, whatever the outcome
	fenced    map[string]int         // replica -> writes its manager's client refused
}

func (r *lossRecord) add(m map[string][]time.Time, id string) {
	r.mu.Lock()
	m[id] = append(m[id], time.Now())
	r.mu.Unlock()
}

// first is the first time in m[id] at or after since; zero if none.
func (r *lossRecord) first(m map[string][]time.Time, id string, since time.Time) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, at := range m[id] {
		if !at.Before(since) {
			return at
		}
	}
	return time.Time{}
}

// last is the last time in m[id]; zero if none.
func (r *lossRecord) last(m map[string][]time.Time, id string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(m[id]); n > 0 {
		return m[id][n-1]
	}
	return time.Time{}
}

// triedSince counts id's writes that returned after since.
func (r *lossRecord) triedSince(since time.Time, id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, at := range r.tried[id] {
		if at.After(since) {
			n++
		}
	}
	return n
}

func (r *lossRecord) fencedOf(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fenced[id]
}

// lossReplica is one manager of testLostLeaseFences behind its own proxy.
type lossReplica struct {
	proxy *harness.LagProxy
	done  chan error // Run's error
}

// isLeaseWrite picks the requests that write a Lease.
func isLeaseWrite(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead && strings.Contains(r.URL.Path, "/leases")
}

// startLossReplica runs a manager under leader election on lossLease,
// with the default timings, reaching the server through a proxy of its
// own. Its reconciler writes the key's annotation through the manager's
// fenced client; with hold it goes on writing every 500 ms until
// release is closed, ignoring its context and writing without its
// cancel, as a careless reconciler would; without, it returns and
// requeues.
func startLossReplica(t T, e *Env, id string, rec *lossRecord, hold bool, release <-chan struct{}) *lossReplica {
	t.Helper()
	p, err := harness.NewLagProxy(e.Target.Config(Admin))
	require.NoError(t, err)
	p.OnForwarded(func(r *http.Request, code int) {
		if r.Method != http.MethodGet && strings.Contains(r.URL.Path, "/configmaps/") && code/100 == 2 {
			rec.add(rec.writes, id)
		}
	})
	ctx, cancel := context.WithCancel(e.Ctx)
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx) }()
	m, err := controller.NewManager(newClient(t, &kube.Config{Host: p.URL}), controller.ManagerOptions{
		Namespace: e.NS, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		LeaderElection: &leader.Config{Namespace: e.NS, Name: lossLease, Identity: id}})
	require.NoError(t, err)
	cms := client.For[*corev1.ConfigMap](m.Client(), kube.Typed[*corev1.ConfigMap](configMapsRes), client.Options{})
	touch := func(ctx context.Context, key controller.Key) {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"by":%q}}}`, id)
		_, err := cms.Patch(ctx, key.Namespace, key.Name, client.MergePatch, []byte(patch), client.PatchOptions{})
		if kube.IsFenced(err) {
			rec.mu.Lock()
			rec.fenced[id]++
			rec.mu.Unlock()
		}
		rec.add(rec.tried, id)
	}
	_, err = controller.New(m, controller.Config[*corev1.ConfigMap]{Name: "loss", For: kube.Typed[*corev1.ConfigMap](configMapsRes), Workers: 4,
		Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
			rec.add(rec.starts, id)
			defer context.AfterFunc(ctx, func() { rec.add(rec.cancelled, id) })()
			touch(ctx, key)
			for hold {
				select {
				case <-release:
					return controller.Result{}, nil
				case <-time.After(500 * time.Millisecond): // ignores ctx
				}
				// Without its cancel (the key stays): only the fence stops it.
				touch(context.WithoutCancel(ctx), key)
			}
			return controller.Result{RequeueAfter: time.Second}, nil
		}})
	require.NoError(t, err)
	r := &lossReplica{proxy: p, done: make(chan error, 1)}
	go func() { r.done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-served
	})
	return r
}

// testLostLeaseFences: the leader a reconciles with reconciles that
// ignore their context and keep writing; b campaigns. Then a proxy in
// front of the server refuses a's Lease writes (500), with the default
// timings (15 s / 10 s / 2 s). At a's renew deadline its reconciles'
// contexts are cancelled and its writes are refused by its manager's
// client (kube.IsFenced) before b takes over; no write of a reaches the
// server after that; b then leads and reconciles, and a's Run ends with
// leader.ErrLost.
func testLostLeaseFences(t T, e *Env) {
	cms := client.For[*corev1.ConfigMap](e.Admin, kube.Typed[*corev1.ConfigMap](configMapsRes), client.Options{})
	for i := range 3 {
		_, err := cms.Create(e.Ctx, newConfigMap(e.NS, fmt.Sprintf("loss-%d", i), nil), client.CreateOptions{})
		require.NoError(t, err)
	}
	rec := &lossRecord{starts: map[string][]time.Time{}, cancelled: map[string][]time.Time{},
		writes: map[string][]time.Time{}, tried: map[string][]time.Time{}, fenced: map[string]int{}}
	release := make(chan struct{})
	letGo := sync.OnceFunc(func() { close(release) })
	t.Cleanup(letGo)
	a := startLossReplica(t, e, "a", rec, true, release)
	eventually(t, e, leaderStep, "a leads and reconciles", func() bool { return !rec.last(rec.writes, "a").IsZero() })
	startLossReplica(t, e, "b", rec, false, release)
	time.Sleep(2 * leader.DefaultRetryPeriod) // b campaigns against a's renewed Lease
	require.True(t, rec.last(rec.starts, "b").IsZero(), "b reconciled while a led")

	refused := time.Now()
	a.proxy.Refuse(isLeaseWrite)
	eventually(t, e, leader.DefaultLeaseDuration+leaderStep, "b takes over", func() bool {
		return !rec.first(rec.starts, "b", refused).IsZero()
	})
	took := rec.first(rec.starts, "b", refused)
	cancelled := rec.first(rec.cancelled, "a", refused)
	t.Logf("a's reconciles cancelled %v after its Lease writes were refused; b took over after %v (renew deadline %v, lease %v)",
		cancelled.Sub(refused).Round(time.Millisecond), took.Sub(refused).Round(time.Millisecond),
		leader.DefaultRenewDeadline, leader.DefaultLeaseDuration)
	if cancelled.IsZero() || !cancelled.Before(took) {
		t.Errorf("a's reconcile contexts were not cancelled before b took over (cancelled %v, b at %v)", cancelled, took)
	}
	// a's reconciles keep writing, ignoring their context: a few rounds
	// after b took over, nothing of a has reached the server, and the
	// fence refused a's writes.
	eventually(t, e, leaderStep, "a's reconciles write after b took over", func() bool {
		return rec.triedSince(took, "a") >= 4
	})
	if w := rec.last(rec.writes, "a"); !w.Before(took) {
		t.Errorf("a write of a reached the server at %v, after b took over at %v", w, took)
	}
	if n := rec.fencedOf("a"); n < 4 {
		t.Errorf("%d of a's writes were refused by the fence, want every one since its renew deadline (at least 4)", n)
	}
	eventually(t, e, leaderStep, "b writes", func() bool { return rec.last(rec.writes, "b").After(took) })
	letGo() // a's reconciles return: its Run may end
	select {
	case err := <-a.done:
		if !errors.Is(err, leader.ErrLost) {
			t.Errorf("a's Run ended with %v, want leader.ErrLost", err)
		}
	case <-time.After(leaderStep + controller.DefaultShutdownTimeout):
		t.Errorf("a's Run did not end after its Lease was lost")
	}
}
