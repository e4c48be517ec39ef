package controller_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
)

// TestControllerOnACompactCache: with the manager's caches compact, a
// controller without predicates enqueues from keys alone, and each
// reconcile's read decodes the version it reads once.
func TestControllerOnACompactCache(t *testing.T) {
	_, c := start(t)
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet(),
		InformerTuning: func(kube.Resource) informer.Tuning {
			return informer.Tuning{Store: informer.StoreCompact}
		}})
	require.NoError(t, err)
	cache, err := controller.Cache(m, kube.Typed[*Obj](kube.ConfigMaps))
	require.NoError(t, err)
	var mu sync.Mutex
	seen := map[string]string{} // name -> data["v"] read by the last reconcile
	_, err = controller.New(m, controller.Config[*Obj]{Name: "c", For: kube.Typed[*Obj](kube.ConfigMaps),
		Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
			o, ok, err := cache.Get(ctx, key)
			if err != nil || !ok {
				return controller.Result{}, err
			}
			mu.Lock()
			seen[key.Name] = o.Data["v"]
			mu.Unlock()
			return controller.Result{}, nil
		}})
	require.NoError(t, err)
	cms := client.For(c, kube.Typed[*Obj](kube.ConfigMaps), client.Options{})
	for i := range 20 {
		o := obj(fmt.Sprintf("cm-%d", i), nil)
		o.Data = map[string]string{"v": "1"}
		_, err := cms.Create(context.Background(), o, client.CreateOptions{})
		require.NoError(t, err)
	}
	run(t, m)
	read := func(name string) string { mu.Lock(); defer mu.Unlock(); return seen[name] }
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 20
	}, waitLong, tick)
	_, err = cms.Modify(context.Background(), "demo", "cm-3", func(o *Obj) error { o.Data["v"] = "2"; return nil },
		client.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return read("cm-3") == "2" }, waitLong, tick)

	inf, err := controller.Informer(m, kube.Typed[*Obj](kube.ConfigMaps))
	require.NoError(t, err)
	st := inf.Stats()
	require.LessOrEqual(t, st.Decodes, int64(22), "a decode per version read, none per event: %+v", st)
	require.Zero(t, st.DecodeErrors)
}

// TestManagerCachesAreCompactByDefault: a manager without InformerTuning
// builds its caches on the compact store.
func TestManagerCachesAreCompactByDefault(t *testing.T) {
	_, c := start(t)
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet()})
	require.NoError(t, err)
	inf, err := controller.Informer(m, kube.Typed[*Obj](kube.ConfigMaps))
	require.NoError(t, err)
	require.Equal(t, informer.StoreCompact, inf.StoreMode())
}
