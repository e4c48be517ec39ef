package controller_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/kube"
)

// These tests are a second reader's attempts to break the expectations
// (expect.go) with the manager's defaults and a lagging cache.

// lagRig is a simulator in namespace demo behind watches lagging by a
// second, and a manager on it with the default options but namespace.
type lagRig struct {
	srv *sim.Server
	m   *controller.Manager
	cms *client.Client[*Obj]
}

func newLagRig(t *testing.T) *lagRig {
	t.Helper()
	srv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	require.NoError(t, srv.EnsureNamespace("demo"))
	m, err := controller.NewManager(serveLagged(t, srv, time.Second), controller.ManagerOptions{Namespace: "demo", Logger: quiet()})
	require.NoError(t, err)
	return &lagRig{srv: srv, m: m, cms: client.For(m.Client(), kube.Typed[*Obj](kube.ConfigMaps), client.Options{})}
}

// run runs the manager until the test ends.
func (r *lagRig) run(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.m.Run(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
}

// settle lets fake time run for d and everything it set off finish.
func settle(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// TestReviewParkedRetryKeepsBackoff: a reconcile that writes and then
// fails (it records the error in another object, then returns it: the
// common "write the condition, return the error") is retried with per-key
// exponential backoff. Its retry comes before the cache showed the write,
// so it is parked; the parked reconcile must not reset the key's backoff,
// or the key is retried once per lag period forever instead of backing
// off: here about 600 reconciles in 10 minutes where the backoff allows
// about 17.
func TestReviewParkedRetryKeepsBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newLagRig(t)
		_, err := controller.CacheIn(r.m, kube.Typed[*Obj](kube.ConfigMaps), kube.Scope{LabelSelector: "log"})
		require.NoError(t, err)
		var reconciles atomic.Int64
		_, err = controller.New(r.m, controller.Config[*Obj]{Name: "failing", For: kube.Typed[*Obj](kube.ConfigMaps),
			ForScope: kube.Scope{LabelSelector: "role=set"},
			Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
				n := reconciles.Add(1)
				patch := fmt.Sprintf(`{"data":{"attempt":"%d"}}`, n)
				if _, err := r.cms.Patch(ctx, key.Namespace, "log", client.MergePatch, []byte(patch), client.PatchOptions{}); err != nil {
					return controller.Result{}, err
				}
				return controller.Result{}, errors.New("the outside world is down")
			}})
		require.NoError(t, err)
		_, err = r.srv.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"log","labels":{"log":"yes"}}}`))
		require.NoError(t, err)
		r.run(t)
		_, err = r.srv.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"set","labels":{"role":"set"}}}`))
		require.NoError(t, err)
		settle(10 * time.Minute)
		// The default backoff doubles from 5 ms: the retries wait for the
		// lag (1 s) until the backoff passes it, then 1.28 s, 2.56 s, ...
		// 327 s: 17 reconciles within 10 minutes.
		t.Logf("%d reconciles", reconciles.Load())
		require.LessOrEqual(t, reconciles.Load(), int64(25), "a failing key backs off although its retries waited for its writes")
	})
}

// TestReviewCreateThenDelete: a reconcile creates an object and then,
// before the cache showed the create, deletes it (a step that failed half
// way, cleaned up). The delete finds no cache holding the object yet; it
// must still be waited for: otherwise the create is the object's last
// write, the next reconcile runs once the cache shows the create, sees an
// object this process deleted, and deletes it again; and a Get returns it.
func TestReviewCreateThenDelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newLagRig(t)
		children, err := controller.CacheIn(r.m, kube.Typed[*Obj](kube.ConfigMaps), kube.Scope{LabelSelector: "owner"})
		require.NoError(t, err)
		var first atomic.Bool
		var got, second atomic.Bool // the Get after the delete found the object; the key ran again
		var listed atomic.Int64     // the second reconcile's children
		var ctl *controller.Controller
		ctl, err = controller.New(r.m, controller.Config[*Obj]{Name: "cleanup", For: kube.Typed[*Obj](kube.ConfigMaps),
			ForScope: kube.Scope{LabelSelector: "role=set"},
			Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
				if first.CompareAndSwap(false, true) {
					child := &Obj{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "x", Labels: map[string]string{"owner": key.Name}}}
					if _, err := r.cms.Create(ctx, child, client.CreateOptions{}); err != nil {
						return controller.Result{}, err
					}
					time.Sleep(500 * time.Millisecond) // the rest of the step, which failed
					if err := r.cms.Delete(ctx, "demo", "x", client.DeleteOptions{}); err != nil {
						return controller.Result{}, err
					}
					_, ok, err := children.Get(ctx, controller.Key{Namespace: "demo", Name: "x"})
					if err != nil {
						return controller.Result{}, err
					}
					got.Store(ok)
					ctl.Enqueue(key)
					return controller.Result{}, nil
				}
				have, err := children.List(ctx, controller.ListOptions{Namespace: "demo", LabelSelector: "owner=" + key.Name})
				if err != nil {
					return controller.Result{}, err
				}
				listed.Store(int64(len(have)))
				second.Store(true)
				return controller.Result{}, nil
			}})
		require.NoError(t, err)
		r.run(t)
		_, err = r.srv.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"set","labels":{"role":"set"}}}`))
		require.NoError(t, err)
		settle(10 * time.Second)
		require.True(t, second.Load(), "the key was reconciled again")
		require.False(t, got.Load(), "a Get after this process deleted the object does not return it")
		require.Zero(t, listed.Load(), "the next reconcile does not see the object this process deleted")
	})
}

// TestReviewClusterScopedCreate: a manager limited to a namespace also
// caches a cluster-scoped resource (its cache holds every object of it:
// the namespace does not apply). A create of a cluster-scoped object is
// waited for like any other: the obvious "make one node for each set"
// creates one, not one per reconcile while the cache lags.
func TestReviewClusterScopedCreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newLagRig(t)
		nodes, err := controller.Cache(r.m, kube.Typed[*Obj](kube.Nodes))
		require.NoError(t, err)
		nodeClient := client.For(r.m.Client(), kube.Typed[*Obj](kube.Nodes), client.Options{})
		var creates atomic.Int64
		ctl, err := controller.New(r.m, controller.Config[*Obj]{Name: "nodes", For: kube.Typed[*Obj](kube.ConfigMaps),
			ForScope: kube.Scope{LabelSelector: "role=set"},
			Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
				have, err := nodes.List(ctx, controller.ListOptions{LabelSelector: "owner=" + key.Name})
				if err != nil || len(have) > 0 {
					return controller.Result{}, err
				}
				node := &Obj{ObjectMeta: metav1.ObjectMeta{GenerateName: key.Name + "-", Labels: map[string]string{"owner": key.Name}}}
				if _, err := nodeClient.Create(ctx, node, client.CreateOptions{}); err != nil {
					return controller.Result{}, err
				}
				creates.Add(1)
				return controller.Result{}, nil
			}})
		require.NoError(t, err)
		r.run(t)
		_, err = r.srv.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"set","labels":{"role":"set"}}}`))
		require.NoError(t, err)
		for creates.Load() == 0 {
			settle(100 * time.Millisecond)
		}
		ctl.Enqueue(controller.Key{Namespace: "demo", Name: "set"}) // the cache shows the node only a second later
		settle(10 * time.Second)
		require.EqualValues(t, 1, creates.Load(), "one node per set")
	})
}

// TestReviewCreateThenRelabel: as TestReviewCreateThenDelete, but the
// second write takes the object out of the cache's scope (its label is
// removed: released, not deleted) before that cache showed the create. The
// next reconcile must not see it among the children the cache selects.
func TestReviewCreateThenRelabel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newLagRig(t)
		children, err := controller.CacheIn(r.m, kube.Typed[*Obj](kube.ConfigMaps), kube.Scope{LabelSelector: "owner"})
		require.NoError(t, err)
		var first, second atomic.Bool
		var listed atomic.Int64
		var ctl *controller.Controller
		ctl, err = controller.New(r.m, controller.Config[*Obj]{Name: "release", For: kube.Typed[*Obj](kube.ConfigMaps),
			ForScope: kube.Scope{LabelSelector: "role=set"},
			Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
				if first.CompareAndSwap(false, true) {
					child := &Obj{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "x", Labels: map[string]string{"owner": key.Name}}}
					if _, err := r.cms.Create(ctx, child, client.CreateOptions{}); err != nil {
						return controller.Result{}, err
					}
					time.Sleep(500 * time.Millisecond)
					if _, err := r.cms.Patch(ctx, "demo", "x", client.MergePatch, []byte(`{"metadata":{"labels":{"owner":null}}}`), client.PatchOptions{}); err != nil {
						return controller.Result{}, err
					}
					ctl.Enqueue(key)
					return controller.Result{}, nil
				}
				have, err := children.List(ctx, controller.ListOptions{Namespace: "demo", LabelSelector: "owner=" + key.Name})
				if err != nil {
					return controller.Result{}, err
				}
				listed.Store(int64(len(have)))
				second.Store(true)
				return controller.Result{}, nil
			}})
		require.NoError(t, err)
		r.run(t)
		_, err = r.srv.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"set","labels":{"role":"set"}}}`))
		require.NoError(t, err)
		settle(10 * time.Second)
		require.True(t, second.Load(), "the key was reconciled again")
		require.Zero(t, listed.Load(), "the next reconcile does not see the object this process released")
	})
}

// TestReviewWritesAfterLeaving: writes that follow one that took the
// object out of a cache's scope are shown by that cache once it shows the
// object gone: it gets no event of them, so its resourceVersion need not
// reach theirs. The next reconcile runs once the lag has passed, not at
// the bound.
func TestReviewWritesAfterLeaving(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newLagRig(t)
		_, err := controller.CacheIn(r.m, kube.Typed[*Obj](kube.ConfigMaps), kube.Scope{LabelSelector: "owner"})
		require.NoError(t, err)
		var first atomic.Bool
		var again atomic.Int64 // when the second reconcile ran, after the first's writes
		var wrote time.Time
		var ctl *controller.Controller
		ctl, err = controller.New(r.m, controller.Config[*Obj]{Name: "leave", For: kube.Typed[*Obj](kube.ConfigMaps),
			ForScope: kube.Scope{LabelSelector: "role=set"},
			Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
				if !first.CompareAndSwap(false, true) {
					again.CompareAndSwap(0, int64(time.Since(wrote)))
					return controller.Result{}, nil
				}
				child := &Obj{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "x", Labels: map[string]string{"owner": key.Name}}}
				if _, err := r.cms.Create(ctx, child, client.CreateOptions{}); err != nil {
					return controller.Result{}, err
				}
				for _, patch := range []string{`{"metadata":{"labels":{"owner":null}}}`, `{"data":{"a":"1"}}`, `{"data":{"a":"2"}}`} {
					time.Sleep(200 * time.Millisecond)
					if _, err := r.cms.Patch(ctx, "demo", "x", client.MergePatch, []byte(patch), client.PatchOptions{}); err != nil {
						return controller.Result{}, err
					}
				}
				wrote = time.Now()
				ctl.Enqueue(key)
				return controller.Result{}, nil
			}})
		require.NoError(t, err)
		r.run(t)
		_, err = r.srv.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"set","labels":{"role":"set"}}}`))
		require.NoError(t, err)
		settle(time.Minute)
		require.NotZero(t, again.Load(), "the key was reconciled again")
		require.Less(t, time.Duration(again.Load()), 5*time.Second, "the next reconcile waited for the lag, not the bound")
	})
}

// TestReviewUpdatesAfterRelease: a reconcile releases a child the cache
// shows (its label removed: it leaves the cache's scope), then writes it
// again before the cache showed the release. The cache shows the release
// as the object gone, at the release's resourceVersion, and gets no event
// of the later write: the next reconcile runs once the lag has passed,
// not at the bound.
func TestReviewUpdatesAfterRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newLagRig(t)
		_, err := controller.CacheIn(r.m, kube.Typed[*Obj](kube.ConfigMaps), kube.Scope{LabelSelector: "owner"})
		require.NoError(t, err)
		var first atomic.Bool
		var again atomic.Int64 // how long after the first's writes the second reconcile ran
		var wrote time.Time
		var ctl *controller.Controller
		ctl, err = controller.New(r.m, controller.Config[*Obj]{Name: "release", For: kube.Typed[*Obj](kube.ConfigMaps),
			ForScope: kube.Scope{LabelSelector: "role=set"},
			Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
				if !first.CompareAndSwap(false, true) {
					again.CompareAndSwap(0, int64(time.Since(wrote)))
					return controller.Result{}, nil
				}
				for _, patch := range []string{`{"metadata":{"labels":{"owner":null}}}`, `{"data":{"a":"1"}}`} {
					if _, err := r.cms.Patch(ctx, "demo", "x", client.MergePatch, []byte(patch), client.PatchOptions{}); err != nil {
						return controller.Result{}, err
					}
					time.Sleep(200 * time.Millisecond)
				}
				wrote = time.Now()
				ctl.Enqueue(key)
				return controller.Result{}, nil
			}})
		require.NoError(t, err)
		_, err = r.srv.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"x","labels":{"owner":"set"}}}`))
		require.NoError(t, err)
		r.run(t)
		settle(5 * time.Second)
		_, err = r.srv.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"set","labels":{"role":"set"}}}`))
		require.NoError(t, err)
		settle(time.Minute)
		require.NotZero(t, again.Load(), "the key was reconciled again")
		require.Less(t, time.Duration(again.Load()), 5*time.Second, "the next reconcile waited for the lag, not the bound")
	})
}

// TestReviewRelistShowsParkedWrite: the server's watch of configmaps lags
// by 20 s; a reconcile creates a child, and the key's next reconcile is
// parked. The server loses its history: every watch ends, the informers
// relist (a list is not delayed) and so show the child at once. The parked
// key runs then, long before the lag or the bound, and sees its child.
func TestReviewRelistShowsParkedWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := sim.New(sim.Options{})
		require.NoError(t, err)
		require.NoError(t, srv.EnsureNamespace("demo"))
		m, err := controller.NewManager(serveLagged(t, srv, 0), controller.ManagerOptions{Namespace: "demo", Logger: quiet()})
		require.NoError(t, err)
		r := &lagRig{srv: srv, m: m, cms: client.For(m.Client(), kube.Typed[*Obj](kube.ConfigMaps), client.Options{})}
		children, err := controller.CacheIn(m, kube.Typed[*Obj](kube.ConfigMaps), kube.Scope{LabelSelector: "owner"})
		require.NoError(t, err)
		var create atomic.Bool
		var listed, again atomic.Int64 // again: 1 + how long after the create the key ran again
		var wrote time.Time
		var ctl *controller.Controller
		ctl, err = controller.New(m, controller.Config[*Obj]{Name: "relist", For: kube.Typed[*Obj](kube.ConfigMaps),
			ForScope: kube.Scope{LabelSelector: "role=set"},
			Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
				if create.Swap(false) {
					child := &Obj{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "x", Labels: map[string]string{"owner": key.Name}}}
					if _, err := r.cms.Create(ctx, child, client.CreateOptions{}); err != nil {
						return controller.Result{}, err
					}
					wrote = time.Now()
					ctl.Enqueue(key)
					return controller.Result{}, nil
				}
				have, err := children.List(ctx, controller.ListOptions{Namespace: "demo", LabelSelector: "owner=" + key.Name})
				if err != nil {
					return controller.Result{}, err
				}
				listed.Store(int64(len(have)))
				again.Store(1 + int64(time.Since(wrote)))
				return controller.Result{}, nil
			}})
		require.NoError(t, err)
		r.run(t)
		_, err = srv.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"set","labels":{"role":"set"}}}`))
		require.NoError(t, err)
		settle(5 * time.Second)
		require.NoError(t, srv.SetWatchLag("configmaps", 20*time.Second))
		again.Store(0)
		create.Store(true)
		ctl.Enqueue(controller.Key{Namespace: "demo", Name: "set"})
		settle(100 * time.Millisecond)
		require.False(t, create.Load(), "the child was created")
		require.Zero(t, again.Load(), "the key is parked")
		require.NoError(t, srv.InjectFault(sim.Fault{Type: sim.ActionDropWatches, LoseHistory: true}))
		settle(time.Minute)
		require.NotZero(t, again.Load(), "the key was reconciled again")
		t.Logf("ran again %v after the create", time.Duration(again.Load()-1))
		require.Less(t, time.Duration(again.Load()-1), 10*time.Second, "the relist showed the write")
		require.EqualValues(t, 1, listed.Load())
	})
}

// warnings counts the Warn records of a logger about expectations.
type warnings struct{ n atomic.Int64 }

func (w *warnings) Enabled(context.Context, slog.Level) bool { return true }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn && strings.Contains(r.Message, "reconciling anyway") {
		w.n.Add(1)
	}
	return nil
}
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

// TestReviewNothingAfterRun: a key is parked when the manager stops. Once
// Run has returned nothing of the manager runs: the bound's timer does
// not fire later to log that the key is reconciled anyway.
func TestReviewNothingAfterRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := sim.New(sim.Options{})
		require.NoError(t, err)
		require.NoError(t, srv.EnsureNamespace("demo"))
		warn := &warnings{}
		m, err := controller.NewManager(serveLagged(t, srv, 10*time.Second), controller.ManagerOptions{Namespace: "demo", Logger: slog.New(warn)})
		require.NoError(t, err)
		cms := client.For(m.Client(), kube.Typed[*Obj](kube.ConfigMaps), client.Options{})
		_, err = controller.CacheIn(m, kube.Typed[*Obj](kube.ConfigMaps), kube.Scope{LabelSelector: "owner"})
		require.NoError(t, err)
		var reconciles atomic.Int64
		var ctl *controller.Controller
		ctl, err = controller.New(m, controller.Config[*Obj]{Name: "stop", For: kube.Typed[*Obj](kube.ConfigMaps),
			ForScope: kube.Scope{LabelSelector: "role=set"},
			Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
				if reconciles.Add(1) == 1 {
					child := &Obj{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "x", Labels: map[string]string{"owner": key.Name}}}
					if _, err := cms.Create(ctx, child, client.CreateOptions{}); err != nil {
						return controller.Result{}, err
					}
					ctl.Enqueue(key)
				}
				return controller.Result{}, nil
			}})
		require.NoError(t, err)
		_, err = srv.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"set","labels":{"role":"set"}}}`))
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		settle(15 * time.Second) // the first sync comes through the lagging watch
		require.EqualValues(t, 1, reconciles.Load(), "the second reconcile is parked")
		cancel()
		require.NoError(t, <-done)
		before := warn.n.Load()
		settle(time.Minute)
		require.Equal(t, before, warn.n.Load(), "no warning from the manager after its Run returned")
	})
}
