package controller_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kwatchtest"
)

// A reconcile reads back what it wrote through the manager's client,
// though the cache lags the server by half a second: the Get waits until
// the cache shows the write, and the key's next reconcile waits the same
// way, so a controller never acts on a cache older than its own writes.
func Example_readYourOwnWrites() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	srv, err := kwatchtest.Serve(ctx, kwatchtest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	srv.LagWatch(kwatchtest.LagOptions{Resource: "configmaps", Delay: 500 * time.Millisecond})
	mgr, _ := controller.NewManager(srv.Client(), controller.ManagerOptions{Logger: quiet()})
	cache, _ := controller.Cache(mgr, ConfigMaps)
	writes := client.For(mgr.Client(), ConfigMaps, client.Options{FieldManager: "counter"})
	done := make(chan struct{})
	_, _ = controller.New(mgr, controller.Config[*ConfigMap]{
		Name: "counter", For: ConfigMaps,
		Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
			cm, ok, err := cache.Get(ctx, key)
			if err != nil || !ok || cm.Annotations["seen"] != "" {
				return controller.Result{}, err
			}
			patch := []byte(`{"metadata":{"annotations":{"seen":"yes"}}}`)
			if _, err := writes.Patch(ctx, key.Namespace, key.Name, client.MergePatch, patch, client.PatchOptions{}); err != nil {
				return controller.Result{}, err
			}
			again, _, err := cache.Get(ctx, key) // waits for the cache to show the patch
			if err != nil {
				return controller.Result{}, err
			}
			fmt.Println("read back:", again.Annotations["seen"])
			close(done)
			return controller.Result{}, nil
		},
	})
	ran := make(chan error)
	go func() { ran <- mgr.Run(ctx) }()
	_, _ = srv.Create("configmaps", &ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "settings"}})
	<-done
	stop()
	fmt.Println("manager stopped:", <-ran)
	// Output:
	// read back: yes
	// manager stopped: <nil>
}
