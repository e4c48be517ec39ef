package informer_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/store"
)

// ListOwned lists by index and label selector, each object the caller's
// own to change. In a compact store the labels are matched on the stored
// metadata, so only the objects returned are decoded.
func ExampleInformer_ListOwned() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := kwatchtest.Serve(ctx, kwatchtest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	for i, app := range []string{"web", "db", "web", "cache"} {
		_, _ = srv.PutPod(kwatchtest.Pod{Namespace: "demo", Name: fmt.Sprintf("%s-%d", app, i), App: app})
	}
	pods, err := informer.New(informer.Options[*metav1.PartialObjectMetadata]{
		Client: srv.Client(), Resource: kube.Pods, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	ran := make(chan error, 1)
	go func() { ran <- pods.Run(ctx) }()
	if !pods.WaitForSync(ctx) {
		return
	}
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	own := func(p *metav1.PartialObjectMetadata) (*metav1.PartialObjectMetadata, error) { return p.DeepCopy(), nil }
	got, err := pods.ListOwned(store.NamespaceIndex, "demo", web, own)
	if err != nil {
		fmt.Println(err)
		return
	}
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	fmt.Println(pods.StoreMode(), names, "decoded:", pods.Stats().Decodes)
	cancel()
	<-ran
	// Output: compact [web-0 web-2] decoded: 2
}
