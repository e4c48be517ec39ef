package engine

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// runtimeCtl is controller-runtime's default manager and a controller
// For pods built with its builder. Changed from the defaults: the
// client-side rate limit is off (QPS -1, as on kwatch's side), the
// metrics server is off (it would bind a fixed port), and with
// priority false the workqueue is client-go's rate-limited FIFO instead
// of the priority queue controller-runtime uses by default.
type runtimeCtl struct {
	mgr manager.Manager
}

func newRuntimeCtl(cfg CtlConfig, p *ctlProbe, priority bool) (ctlEngine, error) {
	// ContentType "" is controller-runtime's default: protobuf for
	// built-in types, which a JSON-only server answers in JSON.
	rc := &rest.Config{Host: cfg.Host, QPS: -1}
	log := logr.FromSlogHandler(slog.NewTextHandler(logSink(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctrl.SetLogger(log)
	mgr, err := ctrl.NewManager(rc, manager.Options{Logger: log, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return nil, fmt.Errorf("controller-runtime manager: %w", err)
	}
	cl := mgr.GetClient()
	r := reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		var pod corev1.Pod
		if err := cl.Get(ctx, req.NamespacedName, &pod); err != nil {
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		if patch := p.seen(pod.Namespace, pod.Name, pod.Annotations); patch != nil {
			return reconcile.Result{}, cl.Patch(ctx, &pod, client.RawPatch(types.MergePatchType, patch))
		}
		return reconcile.Result{}, nil
	})
	err = ctrl.NewControllerManagedBy(mgr).For(&corev1.Pod{}).Named("bench").
		WithOptions(crcontroller.Options{MaxConcurrentReconciles: max(cfg.Workers, 1), UsePriorityQueue: &priority}).
		Complete(r)
	if err != nil {
		return nil, err
	}
	return &runtimeCtl{mgr: mgr}, nil
}

func (c *runtimeCtl) run(ctx context.Context) error { return c.mgr.Start(ctx) }
