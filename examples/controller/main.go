// Command controller is the README's example: a controller that watches
// pods and reconciles them on four workers. Run it with a kubeconfig, or
// with -sim to run against the built-in simulated cluster.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/queue"
	"github.com/kwatch/kwatch/watch"
)

// Pod holds only what this controller reads.
type Pod struct {
	metav1.ObjectMeta `json:"metadata"`
	Status            struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg, err := watch.DefaultConfig(watch.KubeconfigOptions{})
	if err != nil {
		log.Fatal(err)
	}
	if err := run(ctx, cfg, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, cfg *watch.Config, out io.Writer) error {
	c, err := watch.NewClient(cfg)
	if err != nil {
		return err
	}
	pods, err := informer.New(informer.Options[*Pod]{Client: c, Resource: watch.Pods})
	if err != nil {
		return err
	}
	runner, err := queue.NewRunner(queue.RunnerOptions[string]{Workers: 4,
		Reconcile: func(ctx context.Context, key string) (queue.Result, error) {
			pod, ok := pods.Store().Get(key)
			if !ok {
				fmt.Fprintln(out, "gone:", key)
				return queue.Result{}, nil
			}
			fmt.Fprintln(out, key, pod.Status.Phase)
			return queue.Result{}, nil
		}})
	if err != nil {
		return err
	}
	if _, err := pods.AddHandler(informer.KeyHandler[*Pod](runner.Add), informer.HandlerOptions{}); err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { runner.Run(ctx) })
	err = pods.Run(ctx)
	wg.Wait()
	return err
}
