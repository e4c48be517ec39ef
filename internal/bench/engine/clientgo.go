package engine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// clientGoEngine is client-go's pod informer from a SharedInformerFactory
// with default settings. Its initial-list path follows client-go's own
// defaults (a streaming list in v0.37), which the WatchListClient feature
// gate, read by client-go from the environment, can turn off.
type clientGoEngine struct {
	factory informers.SharedInformerFactory
	inf     cache.SharedIndexInformer
}

func newClientGo(cfg Config, p *probe, proto bool) (informerEngine, error) {
	rc := &rest.Config{Host: cfg.Host}
	if !proto {
		// JSON only; left empty, the typed clientset asks for protobuf first.
		rc.ContentType = "application/json"
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("client-go clientset: %w", err)
	}
	f := informers.NewSharedInformerFactory(cs, 0)
	inf := f.Core().V1().Pods().Informer()
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { p.add() },
		UpdateFunc: func(_, obj any) {
			if pod, ok := obj.(*corev1.Pod); ok {
				p.update(pod.Annotations)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	return &clientGoEngine{factory: f, inf: inf}, nil
}

func (c *clientGoEngine) run(ctx context.Context) error {
	c.factory.Start(ctx.Done())
	<-ctx.Done()
	c.factory.Shutdown() // waits for the informer's goroutines
	return nil
}

func (c *clientGoEngine) synced() bool { return c.inf.HasSynced() }
func (c *clientGoEngine) len() int     { return len(c.inf.GetStore().ListKeys()) }
