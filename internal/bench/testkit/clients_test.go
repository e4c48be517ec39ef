package testkit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kwatch/kwatch/kwatchtest"
)

func typedPod(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/c:1"}}},
	}
}

// TestClientGoInformer: a client-go shared informer syncs from the kit over
// TLS and HTTP/2 (its kubeconfig, protobuf), sees changes after its watch was
// cut, and a typed client's graceful delete (protobuf DeleteOptions) shows as
// deletionTimestamp, then the pod goes with grace period 0.
func TestClientGoInformer(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{TLS: true})
	_, err := srv.Create("pods", typedPod("typed", "node-a"))
	require.NoError(t, err)
	_, err = srv.LoadPods(20, 2)
	require.NoError(t, err)

	cfg, err := clientcmd.BuildConfigFromFlags("", srv.Kubeconfig())
	require.NoError(t, err)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	factory := informers.NewSharedInformerFactory(cs, 0)
	inf := factory.Core().V1().Pods().Informer()
	ctx, cancel := context.WithCancel(t.Context())
	defer func() { cancel(); factory.Shutdown() }()
	factory.Start(ctx.Done())
	require.True(t, cache.WaitForCacheSync(ctx.Done(), inf.HasSynced))
	require.Len(t, inf.GetStore().List(), 21)

	cut := srv.CutWatch(kwatchtest.FaultOptions{Resource: "pods", AfterEvents: 1})
	srv.Restart(false) // the open watch ends; the reflector's next one is cut
	for i := range 3 {
		_, err := srv.PutPod(kwatchtest.Pod{Namespace: "demo", Name: fmt.Sprintf("after-%d", i)})
		require.NoError(t, err)
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, time.Minute)
	defer waitCancel()
	require.NoError(t, cut.Wait(waitCtx))
	require.Eventually(t, func() bool { return len(inf.GetStore().List()) == 24 }, time.Minute, 10*time.Millisecond)

	require.NoError(t, cs.CoreV1().Pods("demo").Delete(ctx, "typed", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool {
		o, ok, _ := inf.GetStore().GetByKey("demo/typed")
		return ok && o.(*corev1.Pod).DeletionTimestamp != nil && *o.(*corev1.Pod).DeletionGracePeriodSeconds == 30
	}, time.Minute, 10*time.Millisecond, "a bound pod's delete is graceful")
	zero := int64(0)
	require.NoError(t, cs.CoreV1().Pods("demo").Delete(ctx, "typed", metav1.DeleteOptions{GracePeriodSeconds: &zero}))
	require.Eventually(t, func() bool {
		_, ok, _ := inf.GetStore().GetByKey("demo/typed")
		return !ok
	}, time.Minute, 10*time.Millisecond)
}

// TestControllerRuntimeManager: a controller-runtime manager (its defaults:
// protobuf, its cache) reconciles every pod of the kit, including pods made
// after its watch was cut, and the kit's state shows each one annotated.
func TestControllerRuntimeManager(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	for i := range 3 {
		_, err := srv.Create("pods", typedPod(fmt.Sprintf("before-%d", i), ""))
		require.NoError(t, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", srv.Kubeconfig())
	require.NoError(t, err)
	mgr, err := ctrl.NewManager(cfg, manager.Options{Logger: logr.Discard(), Metrics: metricsserver.Options{BindAddress: "0"}})
	require.NoError(t, err)
	cl := mgr.GetClient()
	skip := true // controller names are process-wide: go test -count=2 builds it twice
	err = ctrl.NewControllerManagedBy(mgr).For(&corev1.Pod{}).Named("annotate").
		WithOptions(crcontroller.Options{SkipNameValidation: &skip}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var pod corev1.Pod
			if err := cl.Get(ctx, req.NamespacedName, &pod); err != nil || pod.Annotations["seen"] == "yes" {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			return reconcile.Result{}, cl.Patch(ctx, &pod, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"seen":"yes"}}}`)))
		}))
	require.NoError(t, err)
	// The manager's first pod watch is cut after two events.
	cut := srv.CutWatch(kwatchtest.FaultOptions{Resource: "pods", AfterEvents: 2})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	waitCtx, waitCancel := context.WithTimeout(ctx, time.Minute)
	defer waitCancel()
	require.NoError(t, cut.Wait(waitCtx))
	for i := range 3 {
		_, err := srv.Create("pods", typedPod(fmt.Sprintf("after-%d", i), ""))
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		pods, err := kwatchtest.ListInto[corev1.Pod](srv, "pods", "demo")
		require.NoError(t, err)
		for _, p := range pods {
			if p.Annotations["seen"] != "yes" {
				return false
			}
		}
		return len(pods) == 6
	}, time.Minute, 10*time.Millisecond)
}
