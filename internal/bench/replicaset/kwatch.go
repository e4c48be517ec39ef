package replicaset

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/examples/replicaset"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/metrics/metricstest"
	"github.com/kwatch/kwatch/queue"
)

// Controllers are the scenario's controllers: kwatch's example, a kwatch
// controller written the obvious way, and controller-runtime's as
// kubebuilder scaffolds it; each on its engine's defaults.
func Controllers() []Controller {
	return []Controller{
		{Name: "kwatch-example", Start: startExample},
		{Name: "kwatch-obvious", Start: startObvious},
		{Name: "controller-runtime", Start: startRuntime},
	}
}

// kwatchManager is a manager on the engine's defaults in Namespace, with
// a metrics registry to count its reconciles from.
func kwatchManager(host string, log *slog.Logger) (*controller.Manager, func() int64, error) {
	c, err := kube.NewClient(&kube.Config{Host: host})
	if err != nil {
		return nil, nil, err
	}
	reg := metrics.NewSet()
	mgr, err := controller.NewManager(c, controller.ManagerOptions{Namespace: Namespace, Logger: log, Metrics: reg})
	return mgr, func() int64 { return reconcileCount(reg) }, err
}

// reconcileCount sums kwatch_reconcile_total over its results.
func reconcileCount(reg *metrics.Set) int64 {
	var b strings.Builder
	if reg.WritePrometheus(&b) != nil {
		return 0
	}
	samples, err := metricstest.Parse(b.String())
	if err != nil {
		return 0
	}
	var n float64
	for _, s := range samples {
		if s.Name == queue.MetricReconcile {
			n += s.Value
		}
	}
	return int64(n)
}

// startExample runs examples/replicaset, which keeps no expectations of
// its own.
func startExample(host string, log *slog.Logger) (func(context.Context) error, func() int64, error) {
	mgr, reconciles, err := kwatchManager(host, log)
	if err != nil {
		return nil, nil, err
	}
	if err := replicaset.Setup(mgr, 1); err != nil {
		return nil, nil, err
	}
	return mgr.Run, reconciles, nil
}

// obvious is a ReplicaSet controller on kwatch written as one would from
// the docs: read the set, list its pods, create the missing, delete the
// surplus, write the status. No expectations of its own.
type obvious struct {
	sets *controller.Reader[*appsv1.ReplicaSet]
	pods *controller.Reader[*corev1.Pod]
	setW *client.Client[*appsv1.ReplicaSet]
	podW *client.Client[*corev1.Pod]
}

func startObvious(host string, log *slog.Logger) (func(context.Context) error, func() int64, error) {
	mgr, reconciles, err := kwatchManager(host, log)
	if err != nil {
		return nil, nil, err
	}
	o := &obvious{
		setW: client.For(mgr.Client(), kube.Typed[*appsv1.ReplicaSet](kube.ReplicaSets), client.Options{}),
		podW: client.For(mgr.Client(), kube.Typed[*corev1.Pod](kube.Pods), client.Options{}),
	}
	if o.sets, err = controller.Cache(mgr, kube.Typed[*appsv1.ReplicaSet](kube.ReplicaSets)); err != nil {
		return nil, nil, err
	}
	if o.pods, err = controller.Cache(mgr, kube.Typed[*corev1.Pod](kube.Pods)); err != nil {
		return nil, nil, err
	}
	_, err = controller.New(mgr, controller.Config[*appsv1.ReplicaSet]{
		Name: "replicaset", For: kube.Typed[*appsv1.ReplicaSet](kube.ReplicaSets),
		Owns:      []controller.Source{controller.Owns(kube.Typed[*corev1.Pod](kube.Pods))},
		Reconcile: o.reconcile,
	})
	if err != nil {
		return nil, nil, err
	}
	return mgr.Run, reconciles, nil
}

func (o *obvious) reconcile(ctx context.Context, key controller.Key) (controller.Result, error) {
	rs, ok, err := o.sets.Get(ctx, key)
	if err != nil || !ok {
		return controller.Result{}, err // gone: the garbage collector deletes its pods
	}
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return controller.Result{}, controller.Terminal(err)
	}
	all, err := o.pods.List(ctx, controller.ListOptions{Namespace: key.Namespace, LabelSelector: sel.String()})
	if err != nil {
		return controller.Result{}, err
	}
	var pods []*corev1.Pod
	for _, p := range all {
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == rs.UID && p.DeletionTimestamp == nil {
			pods = append(pods, p)
		}
	}
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	want := int(ptrOr(rs.Spec.Replicas, 1))
	for i := len(pods); i < want; i++ {
		if _, err := o.podW.Create(ctx, podFor(rs), client.CreateOptions{}); err != nil {
			return controller.Result{}, fmt.Errorf("creating a pod: %w", err)
		}
	}
	for _, p := range pods[min(want, len(pods)):] {
		if err := o.podW.Delete(ctx, p.Namespace, p.Name, client.DeleteOptions{}); err != nil && !kube.IsNotFound(err) {
			return controller.Result{}, err
		}
	}
	n := int32(want)
	if rs.Status.Replicas == n && rs.Status.ObservedGeneration == rs.Generation {
		return controller.Result{}, nil
	}
	rs.Status.Replicas, rs.Status.ObservedGeneration = n, rs.Generation
	_, err = o.setW.UpdateStatus(ctx, rs, client.WriteOptions{})
	return controller.Result{}, err
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// podFor is a pod of rs's template, controlled by rs.
func podFor(rs *appsv1.ReplicaSet) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: rs.Namespace, GenerateName: rs.Name + "-",
			Labels:          rs.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
		Spec: rs.Spec.Template.Spec,
	}
}
