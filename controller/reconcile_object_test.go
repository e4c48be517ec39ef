package controller_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/metrics/metricstest"
	"github.com/kwatch/kwatch/shard"
)

// A Config takes exactly one of Reconcile and ReconcileObject, and says
// which mistake it has when it has none or both.
func TestReconcileObjectConfigIsExclusive(t *testing.T) {
	_, c := start(t)
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet()})
	require.NoError(t, err)
	cms := kube.Typed[*Obj](kube.ConfigMaps)
	keyed := func(context.Context, controller.Key) (controller.Result, error) { return controller.Result{}, nil }
	object := func(context.Context, *Obj) (controller.Result, error) { return controller.Result{}, nil }
	tests := []struct {
		name    string
		cfg     controller.Config[*Obj]
		wantErr string
	}{
		{"none", controller.Config[*Obj]{Name: "none", For: cms}, `controller "none": Config needs exactly one of Reconcile and ReconcileObject, not none`},
		{"both", controller.Config[*Obj]{Name: "both", For: cms, Reconcile: keyed, ReconcileObject: object},
			`controller "both": Config needs exactly one of Reconcile and ReconcileObject, not both`},
		{"keyed", controller.Config[*Obj]{Name: "keyed", For: cms, Reconcile: keyed}, ""},
		{"object", controller.Config[*Obj]{Name: "object", For: cms, ReconcileObject: object}, ""},
	}
	for _, tt := range tests {
		_, err := controller.New(m, tt.cfg)
		if tt.wantErr == "" {
			require.NoError(t, err, tt.name)
			continue
		}
		require.EqualError(t, err, tt.wantErr, tt.name)
	}
}

// call is one ReconcileObject call the tests record.
type call struct {
	name     string
	n        string // data.n
	deleting bool   // DeletionTimestamp set
}

// calls records ReconcileObject's calls.
type calls struct {
	mu  sync.Mutex
	all []call
}

func (c *calls) add(obj *Obj) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all = append(c.all, call{obj.Name, obj.Data["n"], obj.DeletionTimestamp != nil})
}

func (c *calls) of(name string) []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []call
	for _, x := range c.all {
		if x.name == name {
			out = append(out, x)
		}
	}
	return out
}

// ReconcileObject gets each existing object, one being deleted (held by
// its finalizer) included, and is not called for a key whose object is
// gone or never was: the key is still reconciled (the reconcile counter
// moves), without a call.
func TestReconcileObjectIsNotCalledForAGoneObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := sim.New(sim.Options{})
		require.NoError(t, err)
		require.NoError(t, srv.EnsureNamespace("demo"))
		reg := metrics.NewSet()
		m, err := controller.NewManager(serveLagged(t, srv, 0), controller.ManagerOptions{Namespace: "demo", Logger: quiet(), Metrics: reg})
		require.NoError(t, err)
		cms := client.For(m.Client(), kube.Typed[*Obj](kube.ConfigMaps), client.Options{})
		var got calls
		ctrl, err := controller.New(m, controller.Config[*Obj]{Name: "objects", For: kube.Typed[*Obj](kube.ConfigMaps),
			ReconcileObject: func(ctx context.Context, obj *Obj) (controller.Result, error) {
				got.add(obj)
				if obj.DeletionTimestamp == nil || len(obj.Finalizers) == 0 {
					return controller.Result{}, nil
				}
				obj.Finalizers = nil // the cleanup a finalizer holds the object for
				_, err := cms.Update(ctx, obj, client.UpdateOptions{})
				return controller.Result{}, err
			}})
		require.NoError(t, err)
		_, err = srv.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"plain"}}`))
		require.NoError(t, err)
		_, err = srv.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"held","finalizers":["example.com/cleanup"]}}`))
		require.NoError(t, err)
		run(t, m)
		settle(10 * time.Second)
		require.Equal(t, []call{{name: "plain"}}, got.of("plain"))
		require.Equal(t, []call{{name: "held"}}, got.of("held"))

		reconciled := func() float64 {
			return metricstest.Scrape(t, reg)[`kwatch_reconcile_total{name="objects",result="success"}`]
		}
		before := reconciled()
		for _, name := range []string{"plain", "held"} {
			require.NoError(t, cms.Delete(context.Background(), "demo", name, client.DeleteOptions{}))
		}
		settle(10 * time.Second)
		require.Equal(t, []call{{name: "plain"}}, got.of("plain"), "no call once the object is gone")
		require.Equal(t, []call{{name: "held"}, {name: "held", deleting: true}}, got.of("held"),
			"called while its finalizer holds it, not once it is gone")
		_, err = srv.Get("configmaps", "demo", "held")
		require.Error(t, err, "the finalizer's removal let the object go")
		require.GreaterOrEqual(t, reconciled()-before, 3.0, "the deletes' keys were reconciled: plain's once, held's while deleting and once gone")

		before = reconciled()
		ctrl.Enqueue(controller.Key{Namespace: "demo", Name: "never"})
		settle(10 * time.Second)
		require.Empty(t, got.of("never"))
		require.Equal(t, 1.0, reconciled()-before, "the key of no object was reconciled, without a call")
	})
}

// ReconcileObject is handed an object no older than its own last write,
// though the cache lags the server by a second and it asks to be called
// again 100 ms after each write: each call sees the previous one's
// update, so no update conflicts.
func TestReconcileObjectSeesItsOwnWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := sim.New(sim.Options{})
		require.NoError(t, err)
		require.NoError(t, srv.EnsureNamespace("demo"))
		m, err := controller.NewManager(serveLagged(t, srv, time.Second), controller.ManagerOptions{Namespace: "demo", Logger: quiet()})
		require.NoError(t, err)
		cms := client.For(m.Client(), kube.Typed[*Obj](kube.ConfigMaps), client.Options{})
		var got calls
		var errs []error // guarded by got.mu
		_, err = controller.New(m, controller.Config[*Obj]{Name: "counter", For: kube.Typed[*Obj](kube.ConfigMaps),
			ReconcileObject: func(ctx context.Context, obj *Obj) (controller.Result, error) {
				got.add(obj)
				n, _ := strconv.Atoi(obj.Data["n"])
				if n == 5 {
					return controller.Result{}, nil
				}
				obj.Data = map[string]string{"n": strconv.Itoa(n + 1)}
				if _, err := cms.Update(ctx, obj, client.UpdateOptions{}); err != nil {
					got.mu.Lock()
					errs = append(errs, err)
					got.mu.Unlock()
					return controller.Result{}, err
				}
				return controller.Result{RequeueAfter: 100 * time.Millisecond}, nil
			}})
		require.NoError(t, err)
		_, err = srv.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"a"},"data":{"n":"0"}}`))
		require.NoError(t, err)
		run(t, m)
		settle(10 * time.Second)
		var seen []string
		for _, c := range got.of("a") {
			seen = append(seen, c.n)
		}
		require.Empty(t, errs, "an update from an object older than the last write")
		require.Equal(t, []string{"0", "1", "2", "3", "4", "5"}, seen[:min(6, len(seen))])
		for _, n := range seen[min(6, len(seen)):] {
			require.Equal(t, "5", n, "a later call sees the last write")
		}
	})
}

// In Label mode ReconcileObject is handed each key's object from the
// replica's own labelled cache, through the shard gate: three replicas,
// then a fourth that gains keys whose objects it must relabel first.
// Every call is on the key's owner, with the object labelled for it (not
// a copy read before the move), no key is in two calls at once, and no
// replica caches the other replicas' objects for it.
func TestReconcileObjectInLabelMode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t)
		keys := b.seedAs(100, "cm-%03d", nil)
		var mu sync.Mutex
		var wrong []string // calls with an object not labelled for the replica
		object := func(id string) func(context.Context, *Obj) (controller.Result, error) {
			return func(ctx context.Context, obj *Obj) (controller.Result, error) {
				key := controller.KeyOf(obj).String()
				b.rec.start(id, key)
				defer b.rec.end(id, key)
				if l := obj.Labels[shard.LabelKey("cms")]; l != id {
					mu.Lock()
					wrong = append(wrong, key+" on "+id+" labelled "+strconv.Quote(l))
					mu.Unlock()
				}
				return controller.Result{}, nil
			}
		}
		start := func(id string) *bubbleReplica {
			return b.startWith(id, replicaSpec{mode: shard.Label, mgr: demoOnly, reconcileObject: object})
		}
		rs := []*bubbleReplica{start("replica-0"), start("replica-1"), start("replica-2")}
		b.waitRing(rs, keys)
		require.True(t, within(time.Minute, func() bool { return b.rec.reconciledAfter(rs[0].mgr.Shard().Ring(), keys, 0) }),
			"every key reconciled by its owner")

		rs = append(rs, start("replica-3"))
		b.waitRing(rs, keys)
		require.True(t, within(time.Minute, func() bool { return b.labelledForOwners(rs, keys) }), "relabelled after a join")
		mark := b.rec.mark()
		b.touch(keys, "touched")
		require.True(t, within(time.Minute, func() bool { return b.rec.reconciledAfter(rs[0].mgr.Shard().Ring(), keys, mark) }),
			"every key reconciled by its owner after the join")
		require.Empty(t, b.rec.overlapList())
		for _, r := range rs {
			for _, h := range r.mgr.Health() {
				if strings.HasPrefix(h.Name, "configmaps") {
					require.Contains(t, h.Name, shard.LabelKey("cms"), "%s caches only its own and the unlabelled ConfigMaps", r.id)
				}
			}
		}
		mu.Lock()
		defer mu.Unlock()
		require.Empty(t, wrong)
	})
}
