// Command controller is the README's example: a controller that watches
// pods and reconciles them on four workers, on kwatch's controller layer. Run it with a kubeconfig
// (kubectl's, or in-cluster), or with -sim against a simulated cluster
// served in the process (20 pods in 2 namespaces, 2 changes a second):
//
//	go run ./examples/controller -sim
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
)

// Pod holds only what this controller reads.
type Pod struct {
	metav1.ObjectMeta `json:"metadata"`
	Status            struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

var Pods = kube.Typed[*Pod](kube.Pods) // the type and its resource, paired once

func main() {
	useSim := flag.Bool("sim", false, "run against a simulated cluster served in the process instead of the kubeconfig's")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if *useSim {
		err = runSim(ctx, simCluster, os.Stdout)
	} else {
		err = runKubeconfig(ctx, os.Stdout)
	}
	if err != nil {
		log.Fatal(err)
	}
}

func runKubeconfig(ctx context.Context, out io.Writer) error {
	cfg, err := kube.DefaultConfig(kube.KubeconfigOptions{})
	if err != nil {
		return err
	}
	c, err := kube.NewClient(cfg)
	if err != nil {
		return err
	}
	return run(ctx, c, out)
}

func run(ctx context.Context, c *kube.Client, out io.Writer) error {
	mgr, err := controller.NewManager(c, controller.ManagerOptions{})
	if err != nil {
		return err
	}
	_, err = controller.New(mgr, controller.Config[*Pod]{Name: "pods", For: Pods, Workers: 4,
		// Each pod from the shared cache, a copy; a deleted pod is not passed.
		ReconcileObject: func(ctx context.Context, pod *Pod) (controller.Result, error) {
			fmt.Fprintln(out, controller.KeyOf(pod), pod.Status.Phase)
			return controller.Result{}, nil
		}})
	if err != nil {
		return err
	}
	return mgr.Run(ctx) // workers start once the pod cache has synced
}

// simCluster is what -sim serves: a few pods that keep changing, so there is
// something to reconcile.
var simCluster = kwatchtest.ChurnOptions{Pods: 20, Namespaces: 2, Rate: 2}

// runSim serves a simulated cluster (kwatchtest) on a loopback port, changed
// as churn says, runs the controller against it until ctx ends, and returns
// once the server and the churn have stopped.
func runSim(ctx context.Context, churn kwatchtest.ChurnOptions, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv, err := kwatchtest.Serve(ctx, kwatchtest.Options{})
	if err != nil {
		return err
	}
	churned := make(chan error, 1)
	go func() {
		err := srv.Churn(ctx, churn)
		if err != nil {
			cancel() // a failed change stops the controller too
		}
		churned <- err
	}()
	err = run(ctx, srv.Client(), out)
	cancel()
	return errors.Join(err, <-churned, srv.Close())
}
