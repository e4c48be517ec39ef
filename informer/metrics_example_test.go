package informer_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/watch"
)

// An informer's Stats and Health, exported through a metrics.Set and
// read at scrape time. The server here is kwatchtest's simulator.
func ExampleRegisterMetrics() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := kwatchtest.Serve(ctx, kwatchtest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	_, _ = srv.LoadPods(2, 1)

	c := srv.Client()
	pods, err := informer.New(informer.Options[*metav1.PartialObjectMetadata]{
		Client: c, Resource: kube.Pods, Form: watch.FormMetadata, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	reg := metrics.NewSet()
	if err := informer.RegisterMetrics(reg, pods, informer.MetricsOptions{Name: "pods", Objects: pods.Store().Len}); err != nil {
		fmt.Println(err)
		return
	}
	ran := make(chan error, 1)
	go func() { ran <- pods.Run(ctx) }()
	pods.WaitForSync(ctx)

	var text strings.Builder
	_ = reg.WritePrometheus(&text)
	for _, line := range strings.Split(text.String(), "\n") {
		for _, name := range []string{informer.MetricObjects, informer.MetricRelists, informer.MetricSynced} {
			if strings.HasPrefix(line, name+"{") {
				fmt.Println(line)
			}
		}
	}
	cancel()
	<-ran
	// Output:
	// kwatch_informer_objects{name="pods"} 2
	// kwatch_informer_relists_total{name="pods"} 1
	// kwatch_informer_synced{name="pods"} 1
}
