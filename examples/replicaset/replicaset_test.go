package replicaset_test

import (
	"encoding/json"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/events"
	"github.com/kwatch/kwatch/examples/replicaset"
	"github.com/kwatch/kwatch/kwatchtest"
)

const (
	waitLong = time.Minute
	tick     = 20 * time.Millisecond
)

func newRS(name string, replicas int32, image string) *replicaset.ReplicaSet {
	rs := &replicaset.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}}
	rs.Spec.Replicas = &replicas
	rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	rs.Spec.Template.Metadata.Labels = map[string]string{"app": name}
	rs.Spec.Template.Spec = json.RawMessage(`{"containers":[{"name":"main","image":"` + image + `"}]}`)
	return rs
}

// podsOf reads the pods of ReplicaSet demo/name from the server (not a
// cache) and returns their names and their images, sorted.
func podsOf(t *testing.T, srv *kwatchtest.Server, name string) (names, images []string) {
	t.Helper()
	pods, err := kwatchtest.ListInto[replicaset.Pod](srv, "pods", "demo")
	require.NoError(t, err)
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Labels["app"] != name {
			continue
		}
		var spec struct {
			Containers []struct {
				Image string `json:"image"`
			} `json:"containers"`
		}
		require.NoError(t, json.Unmarshal(p.Spec, &spec))
		names, images = append(names, p.Name), append(images, spec.Containers[0].Image)
	}
	slices.Sort(images)
	return names, images
}

func TestReplicaSetController(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	srv.MustApply(`{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}}`)
	mgr, err := controller.NewManager(srv.Client(), controller.ManagerOptions{Namespace: "demo", Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	require.NoError(t, replicaset.Setup(mgr, 2))
	kwatchtest.Run(t, mgr.Run)

	// The test writes through a client of its own and reads the server's
	// state in process, so it never waits behind the controller's requests.
	ctx, c := t.Context(), srv.Client()
	rss := client.For(c, replicaset.ReplicaSets, client.Options{})
	pods := client.For(c, replicaset.Pods, client.Options{})
	_, err = rss.Create(ctx, newRS("web", 3, "nginx:1"), client.CreateOptions{})
	require.NoError(t, err)
	converges := func(want []string, what string) {
		t.Helper()
		require.Eventually(t, func() bool {
			_, images := podsOf(t, srv, "web")
			return slices.Equal(images, want)
		}, waitLong, tick, "%s: want pods of %v", what, want)
	}
	// observed waits until the status reports the current generation and
	// cond holds.
	observed := func(what string, cond func(rs replicaset.ReplicaSet) bool) {
		t.Helper()
		require.Eventually(t, func() bool {
			obj, err := srv.Get("replicasets.apps", "demo", "web")
			require.NoError(t, err)
			var rs replicaset.ReplicaSet
			require.NoError(t, obj.Into(&rs))
			return rs.Status.ObservedGeneration == rs.Generation && cond(rs)
		}, waitLong, tick, what)
	}
	converges(slices.Repeat([]string{"nginx:1"}, 3), "created")
	observed("status follows", func(rs replicaset.ReplicaSet) bool { return rs.Status.Replicas == 3 })
	require.Eventually(t, func() bool {
		evs, err := kwatchtest.ListInto[events.Event](srv, "events", "demo")
		require.NoError(t, err)
		n := 0
		for _, e := range evs {
			if e.Reason == "SuccessfulCreate" && e.InvolvedObject.Kind == "ReplicaSet" && e.InvolvedObject.Name == "web" {
				n++
			}
		}
		return n == 3
	}, waitLong, tick, "one SuccessfulCreate event per pod")

	_, err = rss.SetScale(ctx, "demo", "web", 5, client.WriteOptions{})
	require.NoError(t, err)
	converges(slices.Repeat([]string{"nginx:1"}, 5), "scaled up")
	_, err = rss.SetScale(ctx, "demo", "web", 1, client.WriteOptions{})
	require.NoError(t, err)
	converges([]string{"nginx:1"}, "scaled down")

	_, err = rss.Patch(ctx, "demo", "web", client.MergePatch,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:2"}]}}}}`), client.PatchOptions{})
	require.NoError(t, err)
	// The controller has seen the new template once it reports its
	// generation; a pod deleted before that may be replaced from the old one.
	observed("the controller saw the template change", func(rs replicaset.ReplicaSet) bool { return rs.Generation > 1 })
	names, _ := podsOf(t, srv, "web")
	require.Len(t, names, 1)
	require.NoError(t, pods.Delete(ctx, "demo", names[0], client.DeleteOptions{}))
	converges([]string{"nginx:2"}, "a deleted pod is replaced from the new template")

	require.NoError(t, rss.Delete(ctx, "demo", "web", client.DeleteOptions{}))
	converges(nil, "the ReplicaSet's pods go with it")
}
