package replicaset

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// runtimeReconciler is a ReplicaSet controller as kubebuilder scaffolds
// one: For(&ReplicaSet{}).Owns(&Pod{}), the manager's cached client, no
// expectations; the same reconcile as kwatch's obvious one.
type runtimeReconciler struct {
	client.Client
	scheme *runtime.Scheme
	calls  atomic.Int64
}

// startRuntime runs it on controller-runtime's defaults. The client's QPS
// and burst are the ones ctrl.GetConfig sets when a kubeconfig leaves
// them unset (20 and 30); the metrics server is off (it would bind a
// fixed port).
func startRuntime(host string, log *slog.Logger) (func(context.Context) error, func() int64, error) {
	lr := logr.FromSlogHandler(log.Handler())
	ctrl.SetLogger(lr)
	mgr, err := ctrl.NewManager(&rest.Config{Host: host, QPS: 20, Burst: 30}, manager.Options{Logger: lr,
		Metrics: metricsserver.Options{BindAddress: "0"},
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{Namespace: {}}}})
	if err != nil {
		return nil, nil, fmt.Errorf("controller-runtime manager: %w", err)
	}
	r := &runtimeReconciler{Client: mgr.GetClient(), scheme: mgr.GetScheme()}
	// One process runs one manager per scenario: its controller name is
	// registered globally, so the check for a second one is off.
	skip := true
	err = ctrl.NewControllerManagedBy(mgr).For(&appsv1.ReplicaSet{}).Owns(&corev1.Pod{}).Named("replicaset").
		WithOptions(crcontroller.Options{SkipNameValidation: &skip}).Complete(r)
	if err != nil {
		return nil, nil, err
	}
	return mgr.Start, r.calls.Load, nil
}

func (r *runtimeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.calls.Add(1)
	var rs appsv1.ReplicaSet
	if err := r.Get(ctx, req.NamespacedName, &rs); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil {
		return ctrl.Result{}, err
	}
	var all corev1.PodList
	if err := r.List(ctx, &all, client.InNamespace(req.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return ctrl.Result{}, err
	}
	var pods []*corev1.Pod
	for i := range all.Items {
		p := &all.Items[i]
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.UID == rs.UID && p.DeletionTimestamp == nil {
			pods = append(pods, p)
		}
	}
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	want := int(ptrOr(rs.Spec.Replicas, 1))
	for i := len(pods); i < want; i++ {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: rs.Namespace, GenerateName: rs.Name + "-",
			Labels: rs.Spec.Template.Labels}, Spec: rs.Spec.Template.Spec}
		if err := controllerutil.SetControllerReference(&rs, pod, r.scheme); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Create(ctx, pod); err != nil {
			return ctrl.Result{}, fmt.Errorf("creating a pod: %w", err)
		}
	}
	for _, p := range pods[min(want, len(pods)):] {
		if err := r.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	n := int32(want)
	if rs.Status.Replicas == n && rs.Status.ObservedGeneration == rs.Generation {
		return ctrl.Result{}, nil
	}
	rs.Status.Replicas, rs.Status.ObservedGeneration = n, rs.Generation
	return ctrl.Result{}, r.Status().Update(ctx, &rs)
}
