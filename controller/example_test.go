package controller_test

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
)

// ConfigMap holds what the example reads.
type ConfigMap struct {
	metav1.ObjectMeta `json:"metadata"`
	Data              map[string]string `json:"data,omitempty"`
}

// ConfigMaps pairs ConfigMap with its resource.
var ConfigMaps = kube.Typed[*ConfigMap](kube.ConfigMaps)

// A controller that stamps every configmap with the number of its keys,
// against kwatchtest's simulator served in the process.
func Example() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	srv, err := kwatchtest.Serve(ctx, kwatchtest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	c := srv.Client()

	mgr, _ := controller.NewManager(c, controller.ManagerOptions{Logger: quiet()})
	writes := client.For(c, ConfigMaps, client.Options{FieldManager: "stamper"})
	done := make(chan struct{})
	var once sync.Once
	_, err = controller.New(mgr, controller.Config[*ConfigMap]{
		Name: "stamper", For: ConfigMaps,
		// Called with a copy of each configmap in the cache.
		ReconcileObject: func(ctx context.Context, cm *ConfigMap) (controller.Result, error) {
			want := fmt.Sprint(len(cm.Data))
			if cm.Annotations["keys"] == want {
				return controller.Result{}, nil
			}
			patch := []byte(`{"metadata":{"annotations":{"keys":"` + want + `"}}}`)
			out, err := writes.Patch(ctx, cm.Namespace, cm.Name, client.MergePatch, patch, client.PatchOptions{})
			if err == nil {
				once.Do(func() {
					fmt.Println(controller.KeyOf(out), "has", out.Annotations["keys"], "keys")
					close(done)
				})
			}
			return controller.Result{}, err
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ran := make(chan error)
	go func() { ran <- mgr.Run(ctx) }()
	_, _ = writes.Create(ctx, &ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "settings"},
		Data: map[string]string{"a": "1", "b": "2"}}, client.CreateOptions{})
	<-done
	stop()
	fmt.Println("manager stopped:", <-ran)
	// Output:
	// demo/settings has 2 keys
	// manager stopped: <nil>
}
