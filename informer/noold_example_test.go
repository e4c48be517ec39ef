package informer_test

import (
	"context"
	"fmt"
	"log/slog"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
)

// A handler that reads only the new object of an update says so with
// NoOld: its OnUpdate gets nil as old, and the compact store (the
// default) decodes one object per update instead of two.
func ExampleHandlerOptions_noOld() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := kwatchtest.Serve(ctx, kwatchtest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	_, _ = srv.PutPod(kwatchtest.Pod{Namespace: "demo", Name: "web-1"})
	pods, err := informer.New(informer.Options[*metav1.PartialObjectMetadata]{
		Client: srv.Client(), Resource: kube.Pods, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	seen := make(chan string, 10)
	_, _ = pods.AddHandler(informer.HandlerFuncs[*metav1.PartialObjectMetadata]{
		AddFunc: func(p *metav1.PartialObjectMetadata, _ bool) { seen <- "add " + p.Name },
		UpdateFunc: func(old, p *metav1.PartialObjectMetadata) {
			seen <- fmt.Sprintf("update %s, old given: %t", p.Name, old != nil)
		},
	}, informer.HandlerOptions{NoOld: true})
	ran := make(chan error, 1)
	go func() { ran <- pods.Run(ctx) }()
	fmt.Println(<-seen)
	_, _ = srv.PutPod(kwatchtest.Pod{Namespace: "demo", Name: "web-1", Restarts: 3})
	fmt.Println(<-seen)
	cancel()
	<-ran
	// Output:
	// add web-1
	// update web-1, old given: false
}
