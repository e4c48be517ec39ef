package informer_test

import (
	"context"
	"fmt"
	"log/slog"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/watch"
)

// An informer lists and watches pods; readers use its read-only Store.
// The server here is kwatchtest's simulator, served in the process.
func ExampleInformer() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := kwatchtest.Serve(ctx, kwatchtest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	_, _ = srv.PutPod(kwatchtest.Pod{Namespace: "demo", Name: "web-1"})
	_, _ = srv.PutPod(kwatchtest.Pod{Namespace: "demo", Name: "web-2"})

	c := srv.Client()
	pods, err := informer.New(informer.Options[*metav1.PartialObjectMetadata]{
		Client: c, Resource: kube.Pods, Form: watch.FormMetadata, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	ran := make(chan error, 1)
	go func() { ran <- pods.Run(ctx) }()
	if pods.WaitForSync(ctx) {
		_, ok := pods.Store().Get("demo/web-1")
		fmt.Println("synced:", pods.Store().Len(), "pods; demo/web-1 cached:", ok)
	}
	cancel()
	<-ran
	// Output: synced: 2 pods; demo/web-1 cached: true
}
