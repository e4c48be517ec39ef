package engine

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
)

// kwatchCtl is kwatch's controller layer with its defaults: a Manager, a
// pod cache on the manager's default (compact) store, a controller For
// pods (default rate limiter and queue), writes through package client;
// only the client-side rate limit is off (QPS -1), as on
// controller-runtime's side.
type kwatchCtl struct {
	mgr *controller.Manager
}

// newKwatchCtl builds the controller; with noCopy its reconciler reads the
// informer's store in place (controller.Informer, then Store().Get)
// instead of the Reader's deep copy, to measure what the copy costs.
func newKwatchCtl(cfg CtlConfig, p *ctlProbe, noCopy bool) (ctlEngine, error) {
	// ContentType "" is kwatch's default: protobuf where the server speaks
	// it, JSON otherwise.
	c, err := kube.NewClient(&kube.Config{Host: cfg.Host, RateLimit: kube.RateLimitConfig{QPS: -1}})
	if err != nil {
		return nil, fmt.Errorf("kwatch client: %w", err)
	}
	log := slog.New(slog.NewTextHandler(logSink(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	mgr, err := controller.NewManager(c, controller.ManagerOptions{Logger: log})
	if err != nil {
		return nil, err
	}
	pods, err := controller.Cache(mgr, kube.Typed[*corev1.Pod](kube.Pods))
	if err != nil {
		return nil, err
	}
	get := pods.Get
	if noCopy {
		inf, err := controller.Informer(mgr, kube.Typed[*corev1.Pod](kube.Pods))
		if err != nil {
			return nil, err
		}
		get = func(_ context.Context, key controller.Key) (*corev1.Pod, bool, error) {
			pod, ok := inf.Store().Get(key.String()) // workers start after the sync
			return pod, ok, nil
		}
	}
	writes := client.For(c, kube.Typed[*corev1.Pod](kube.Pods), client.Options{})
	_, err = controller.New(mgr, controller.Config[*corev1.Pod]{
		Name: "bench", For: kube.Typed[*corev1.Pod](kube.Pods), Workers: cfg.Workers,
		Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
			pod, ok, err := get(ctx, key)
			if err != nil || !ok {
				return controller.Result{}, err
			}
			if patch := p.seen(pod.Namespace, pod.Name, pod.Annotations); patch != nil {
				_, err = writes.Patch(ctx, key.Namespace, key.Name, client.MergePatch, patch, client.PatchOptions{})
			}
			return controller.Result{}, err
		},
	})
	if err != nil {
		return nil, err
	}
	return &kwatchCtl{mgr: mgr}, nil
}

func (k *kwatchCtl) run(ctx context.Context) error { return k.mgr.Run(ctx) }
