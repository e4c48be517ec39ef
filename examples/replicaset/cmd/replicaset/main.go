// Command replicaset runs the example ReplicaSet controller against the
// cluster of the current kubeconfig (or in-cluster), with its probes and
// metrics on -addr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/examples/replicaset"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
)

func main() {
	ns := flag.String("namespace", "", "namespace to manage; all when empty")
	addr := flag.String("addr", "127.0.0.1:8081", "address of /healthz, /readyz and /metrics; empty for none")
	workers := flag.Int("workers", 2, "reconciles at once")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *ns, *addr, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "replicaset:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, ns, addr string, workers int) error {
	cfg, err := kube.DefaultConfig(kube.KubeconfigOptions{})
	if err != nil {
		return err
	}
	c, err := kube.NewClient(cfg)
	if err != nil {
		return err
	}
	reg := metrics.NewSet()
	mgr, err := controller.NewManager(c, controller.ManagerOptions{Namespace: ns, Metrics: reg, Logger: slog.Default()})
	if err != nil {
		return err
	}
	if err := replicaset.Setup(mgr, workers); err != nil {
		return err
	}
	if addr != "" {
		srv := &http.Server{Addr: addr, Handler: mgr.Handler()}
		go func() {
			if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
				slog.Error("probe server", "error", err)
			}
		}()
		defer srv.Close()
	}
	return mgr.Run(ctx)
}
