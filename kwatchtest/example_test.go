package kwatchtest_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/watch"
)

// Seed objects from YAML, then read them through kwatch's client and back
// from the server. In a test, kwatchtest.Start(t, ...) replaces Serve and
// Close.
func ExampleServer_Apply() {
	srv, err := kwatchtest.Serve(context.Background(), kwatchtest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	srv.MustApply(`apiVersion: v1
kind: ConfigMap
metadata: {namespace: demo, name: settings}
data: {mode: fast}
---
apiVersion: apps/v1
kind: Deployment
metadata: {namespace: demo, name: web}
spec: {replicas: 3}
`)
	c := srv.Client()
	cms := client.For(c, kube.Typed[*configMap](kube.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}), client.Options{})
	cm, err := cms.Get(context.Background(), "demo", "settings", client.GetOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("mode:", cm.Data["mode"])
	deps, _ := srv.List("deployments.apps", "demo")
	fmt.Println("deployments:", len(deps), deps[0].Name)
	// Output:
	// mode: fast
	// deployments: 1 web
}

// Cut an informer's watch in the middle of a frame and wait until the
// server did it; the informer resumes and sees what changed after.
func ExampleServer_CutWatch() {
	srv, _ := kwatchtest.Serve(context.Background(), kwatchtest.Options{})
	defer srv.Close()
	_, _ = srv.LoadPods(10, 2)
	c := srv.Client()
	pods, _ := informer.New(informer.Options[*metav1.PartialObjectMetadata]{
		Client: c, Resource: kube.Pods, Form: watch.FormMetadata, Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- pods.Run(ctx) }()
	pods.WaitForSync(ctx)

	cut := srv.CutWatch(kwatchtest.FaultOptions{Resource: "pods"})
	srv.Restart(false) // ends the open watch; the informer's next one is cut
	_, _ = srv.PutPod(kwatchtest.Pod{Namespace: "ns-000", Name: "late"})
	if err := cut.Wait(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for ctx.Err() == nil { // until the informer has resumed and seen the change
		if _, ok := pods.Store().Get("ns-000/late"); ok {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Println("cut fired:", cut.Fired(), "; pods cached:", pods.Store().Len())
	cancel()
	<-ran
	// Output: cut fired: 1 ; pods cached: 11
}
