package controller_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/internal/rig/memcluster"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/metrics/metricstest"
)

// Reader.Owned returns what an owner controls, by uid, through the owner
// index that Owns builds in, on a typed and a compact cache; and, by a
// scan, on a cache that was built before the controller.
func TestOwnedThroughTheOwnerIndex(t *testing.T) {
	for _, tc := range []struct {
		name       string
		mode       informer.StoreMode
		cacheFirst bool
	}{
		{"typed", informer.StoreTyped, false},
		{"compact", informer.StoreCompact, false},
		{"cache built first", informer.StoreTyped, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := start(t)
			m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet(),
				InformerTuning: func(kube.Resource) informer.Tuning {
					return informer.Tuning{Store: tc.mode}
				}})
			require.NoError(t, err)
			var cache *controller.Reader[*Obj]
			if tc.cacheFirst {
				cache, err = controller.Cache(m, kube.Typed[*Obj](kube.ConfigMaps))
				require.NoError(t, err)
			}
			_, err = controller.New(m, controller.Config[*Obj]{Name: "c", For: kube.Typed[*Obj](kube.Deployments),
				Owns: []controller.Source{controller.Owns(kube.Typed[*Obj](kube.ConfigMaps))},
				Reconcile: func(context.Context, controller.Key) (controller.Result, error) {
					return controller.Result{}, nil
				}})
			require.NoError(t, err)
			if !tc.cacheFirst {
				cache, err = controller.Cache(m, kube.Typed[*Obj](kube.ConfigMaps))
				require.NoError(t, err)
			}
			inf, err := controller.Informer(m, kube.Typed[*Obj](kube.ConfigMaps))
			require.NoError(t, err)
			require.Equal(t, !tc.cacheFirst, slices.Contains(inf.Store().IndexNames(), controller.OwnerIndex))

			cms := client.For(c, kube.Typed[*Obj](kube.ConfigMaps), client.Options{})
			for _, o := range []*Obj{
				obj("a", ownerRef("Deployment", "apps/v1", "web", true)),
				obj("b", ownerRef("Deployment", "apps/v1", "web", true)),
				obj("c", ownerRef("Deployment", "apps/v1", "web", false)), // owned, not controlled
				obj("d", ownerRef("Deployment", "apps/v1", "api", true)),
				obj("e", nil),
			} {
				_, err := cms.Create(context.Background(), o, client.CreateOptions{})
				require.NoError(t, err)
			}
			run(t, m)
			web := &Obj{}
			web.Namespace, web.UID = "demo", types.UID("u-web")
			names := func() []string {
				got, err := cache.Owned(context.Background(), web)
				require.NoError(t, err)
				var out []string
				for _, o := range got {
					out = append(out, o.Name)
				}
				return out
			}
			require.Eventually(t, func() bool { return slices.Equal(names(), []string{"a", "b"}) }, waitLong, tick)
			got, err := cache.Owned(context.Background(), web)
			require.NoError(t, err)
			got[0].Labels = map[string]string{"changed": "by the caller"}
			again, err := cache.Owned(context.Background(), web)
			require.NoError(t, err)
			require.Empty(t, again[0].Labels, "Owned hands out copies")
		})
	}
}

// The controller's sources queue the informer's initial list at low
// priority and changes at normal priority: a change made while the
// initial list waits is reconciled before it. In a bubble: on real time
// a loaded machine could let the waiting keys age past MaxLowWait (10 s)
// before the change arrives, and they would rightly go first.
func TestInitialListWaitsBehindChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cl := memcluster.New(t)
		require.NoError(t, cl.Server.EnsureNamespace("demo"))
		c, _ := cl.Connect("manager")
		reg := metrics.NewSet()
		m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet(), Metrics: reg})
		require.NoError(t, err)
		cms := client.For(c, kube.Typed[*Obj](kube.ConfigMaps), client.Options{})
		const initial = 20
		for i := range initial {
			_, err := cms.Create(context.Background(), obj(fmt.Sprintf("cm-%02d", i), nil), client.CreateOptions{})
			require.NoError(t, err)
		}
		release := make(chan struct{})
		var mu sync.Mutex
		var order []string
		_, err = controller.New(m, controller.Config[*Obj]{Name: "prio", For: kube.Typed[*Obj](kube.ConfigMaps),
			Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
				mu.Lock()
				order = append(order, key.Name)
				first := len(order) == 1
				mu.Unlock()
				if first {
					select { // a failed test's shutdown cancels ctx
					case <-release:
					case <-ctx.Done():
					}
				}
				return controller.Result{}, nil
			}})
		require.NoError(t, err)
		run(t, m)
		depth := func(prio string) float64 {
			return metricstest.Scrape(t, reg)[`kwatch_workqueue_priority_depth{name="prio",priority="`+prio+`"}`]
		}
		synctest.Wait()
		require.Equal(t, float64(initial-1), depth("low"), "the first initial key is being reconciled; the others wait, low")
		_, err = cms.Create(context.Background(), obj("changed", nil), client.CreateOptions{})
		require.NoError(t, err)
		synctest.Wait()
		require.Equal(t, 1.0, depth("normal"))
		close(release)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, order, initial+1)
		require.Equal(t, "changed", order[1], "order: %v", order)
	})
}
