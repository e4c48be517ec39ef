package informer_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
)

// A compact store keeps each object as the server encoded it and decodes
// on read; a KeyHandler feeding a queue never decodes. With a snapshot, a
// restarted informer resumes from the file instead of listing again.
func ExampleStoreCompact() {
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
	dir, _ := os.MkdirTemp("", "kwatch-example")
	defer os.RemoveAll(dir)
	opts := informer.Options[*metav1.PartialObjectMetadata]{
		Client: c, Resource: kube.Pods,
		Snapshot: &informer.SnapshotOptions{Path: filepath.Join(dir, "pods.snap")},
		Logger:   slog.New(slog.DiscardHandler),
		Tuning:   informer.Tuning{Store: informer.StoreCompact},
	}

	for run := 1; run <= 2; run++ {
		pods, err := informer.New(opts)
		if err != nil {
			fmt.Println(err)
			return
		}
		keys := make(chan string, 10)
		_, _ = pods.AddHandler(informer.KeyHandler[*metav1.PartialObjectMetadata](func(k string) { keys <- k }),
			informer.HandlerOptions{})
		runCtx, stop := context.WithCancel(ctx)
		ran := make(chan error, 1)
		go func() { ran <- pods.Run(runCtx) }()
		if pods.WaitForSync(runCtx) {
			<-keys
			<-keys
			p, _ := pods.Store().Get("demo/web-1") // decoded here
			st := pods.Stats()
			fmt.Printf("run %d: %d pods, %s decoded, restored from the snapshot: %v, lists: %d\n",
				run, pods.Store().Len(), p.Name, st.Restored, st.Relists)
		}
		stop()
		<-ran // Run writes the snapshot as it returns
	}
	// Output:
	// run 1: 2 pods, web-1 decoded, restored from the snapshot: false, lists: 1
	// run 2: 2 pods, web-1 decoded, restored from the snapshot: true, lists: 0
}
