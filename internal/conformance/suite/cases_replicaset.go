package suite

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/examples/replicaset"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// The harness runs no kube-controller-manager, so on the real server
// kwatch's ReplicaSet controller (examples/replicaset) is the only one
// acting: the case checks the server's state after each step.
func controllerCases() []Case {
	return []Case{
		{Name: "controller/replicaset", Run: testReplicaSetController},
		{Name: "controller/replicaset-lagged", Run: testReplicaSetUnderLag},
	}
}

// rsConverge bounds one step's convergence.
const rsConverge = time.Minute

func testReplicaSetController(t T, e *Env) {
	c := newClient(t, e.Target.Config(Admin))
	mgr, err := controller.NewManager(c, controller.ManagerOptions{Namespace: e.NS,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	require.NoError(t, replicaset.Setup(mgr, 2))
	ctx, cancel := context.WithCancel(e.Ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})

	rss := client.For(c, kube.Typed[*appsv1.ReplicaSet](kube.ReplicaSets), client.Options{Encoding: client.Protobuf})
	pods := client.For(c, kube.Typed[*corev1.Pod](kube.Pods), client.Options{})
	three := int32(3)
	labels := map[string]string{"app": "web"}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: e.NS, Name: "web"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &three, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1"}}}}}}
	created, err := rss.Create(e.Ctx, rs, client.CreateOptions{})
	require.NoError(t, err)

	images := func() []string {
		page, err := pods.List(e.Ctx, kube.Scope{Namespace: e.NS, LabelSelector: "app=web"}, watch.ListOptions{})
		require.NoError(t, err)
		var out []string
		for _, p := range page.Items {
			if p.DeletionTimestamp != nil {
				continue
			}
			ref := metav1.GetControllerOfNoCopy(p)
			require.NotNil(t, ref, "pod %s has a controller", p.Name)
			require.Equal(t, created.UID, ref.UID, "pod %s is controlled by the ReplicaSet", p.Name)
			out = append(out, p.Spec.Containers[0].Image)
		}
		slices.Sort(out)
		return out
	}
	converge := func(want []string, what string) {
		t.Helper()
		eventually(t, e, rsConverge, what, func() bool { return slices.Equal(images(), want) })
	}
	n := func(image string, k int) []string { return slices.Repeat([]string{image}, k) }

	converge(n("nginx:1", 3), "three pods created")
	eventually(t, e, rsConverge, "status.replicas and observedGeneration", func() bool {
		got, err := rss.Get(e.Ctx, e.NS, "web", client.GetOptions{})
		require.NoError(t, err)
		return got.Status.Replicas == 3 && got.Status.ObservedGeneration == got.Generation
	})
	evs := client.For(c, kube.Typed[*corev1.Event](kube.Events), client.Options{})
	eventually(t, e, rsConverge, "a SuccessfulCreate event per pod", func() bool {
		page, err := evs.List(e.Ctx, kube.Scope{Namespace: e.NS, FieldSelector: "involvedObject.kind=ReplicaSet,involvedObject.name=web,reason=SuccessfulCreate"}, watch.ListOptions{})
		require.NoError(t, err)
		return len(page.Items) == 3
	})

	_, err = rss.SetScale(e.Ctx, e.NS, "web", 5, client.WriteOptions{})
	require.NoError(t, err)
	converge(n("nginx:1", 5), "scaled to five")
	_, err = rss.SetScale(e.Ctx, e.NS, "web", 1, client.WriteOptions{})
	require.NoError(t, err)
	converge(n("nginx:1", 1), "scaled to one")

	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []map[string]any{{"name": "main", "image": "nginx:2"}}}}}})
	require.NoError(t, err)
	_, err = rss.Patch(e.Ctx, e.NS, "web", client.StrategicMergePatch, patch, client.PatchOptions{})
	require.NoError(t, err)
	converge(n("nginx:1", 1), "a template change leaves the running pod")
	// The controller has seen the new template once it reports its
	// generation; a pod deleted before that may be replaced from the old one.
	eventually(t, e, rsConverge, "observedGeneration follows the template change", func() bool {
		got, err := rss.Get(e.Ctx, e.NS, "web", client.GetOptions{})
		require.NoError(t, err)
		return got.Status.ObservedGeneration == got.Generation && got.Generation > 1
	})
	page, err := pods.List(e.Ctx, kube.Scope{Namespace: e.NS, LabelSelector: "app=web"}, watch.ListOptions{})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	require.NoError(t, pods.Delete(e.Ctx, e.NS, page.Items[0].Name, client.DeleteOptions{}))
	converge(n("nginx:2", 1), "the deleted pod is replaced from the new template")

	require.NoError(t, rss.Delete(e.Ctx, e.NS, "web", client.DeleteOptions{}))
	converge(nil, "the ReplicaSet's pods go with it")
}
