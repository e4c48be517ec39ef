package informer_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/internal/sim"
	"github.com/kwatch/kwatch/kube"
)

// An informer lists and watches pods; readers use its read-only Store.
// The server here is the simulator, served in the process.
func ExampleInformer() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	host, served := serveTwoPods(ctx)

	c, err := kube.NewClient(&kube.Config{Host: host})
	if err != nil {
		fmt.Println(err)
		return
	}
	pods, err := informer.New(informer.Options[*metav1.PartialObjectMetadata]{
		Client: c, Resource: kube.Pods, MetadataOnly: true, Logger: slog.New(slog.DiscardHandler)})
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
	<-served
	// Output: synced: 2 pods; demo/web-1 cached: true
}

// serveTwoPods serves a simulated cluster holding demo/web-1 and demo/web-2
// until ctx ends; served receives Serve's result.
func serveTwoPods(ctx context.Context) (host string, served <-chan error) {
	srv, _ := sim.New(sim.Options{})
	_, _ = srv.PutPod(sim.Pod{Namespace: "demo", Name: "web-1"})
	_, _ = srv.PutPod(sim.Pod{Namespace: "demo", Name: "web-2"})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	return "http://" + ln.Addr().String(), done
}
