package replicaset_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/examples/replicaset"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/watch"
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

// podsOf lists rs's pods from the server (not a cache): their images, sorted.
func podsOf(t *testing.T, pods *client.Client[*replicaset.Pod], name string) []string {
	t.Helper()
	page, err := pods.List(context.Background(), kube.Scope{Namespace: "demo", LabelSelector: "app=" + name}, watch.ListOptions{})
	require.NoError(t, err)
	var images []string
	for _, p := range page.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		var spec struct {
			Containers []struct {
				Image string `json:"image"`
			} `json:"containers"`
		}
		require.NoError(t, json.Unmarshal(p.Spec, &spec))
		images = append(images, spec.Containers[0].Image)
	}
	sort.Strings(images)
	return images
}

func images(image string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = image
	}
	return out
}

func TestReplicaSetController(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	srv.MustApply(`{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}}`)
	c, err := kube.NewClient(srv.Config())
	require.NoError(t, err)
	mgr, err := controller.NewManager(c, controller.ManagerOptions{Namespace: "demo",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	require.NoError(t, replicaset.Setup(mgr, 2))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	// The test's own reads poll the server: a client of their own, without
	// a rate limit, so they never wait behind the controller's requests.
	cfg := srv.Config()
	cfg.RateLimit.QPS = -1
	tc, err := kube.NewClient(cfg)
	require.NoError(t, err)
	rss := client.For(tc, replicaset.ReplicaSets, client.Options{})
	pods := client.For(tc, replicaset.Pods, client.Options{})
	_, err = rss.Create(ctx, newRS("web", 3, "nginx:1"), client.CreateOptions{})
	require.NoError(t, err)
	converges := func(want []string, what string) {
		t.Helper()
		require.Eventually(t, func() bool { return slices.Equal(podsOf(t, pods, "web"), want) }, waitLong, tick,
			"%s: pods %v, want %v", what, podsOf(t, pods, "web"), want)
	}
	converges(images("nginx:1", 3), "created")
	require.Eventually(t, func() bool {
		rs, err := rss.Get(ctx, "demo", "web", client.GetOptions{})
		return err == nil && rs.Status.Replicas == 3 && rs.Status.ObservedGeneration == rs.Generation
	}, waitLong, tick, "status follows")

	type event struct {
		metav1.ObjectMeta `json:"metadata"`
		Reason            string `json:"reason"`
		Message           string `json:"message"`
		InvolvedObject    struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"involvedObject"`
	}
	evs := client.For(tc, kube.Typed[*event](kube.Events), client.Options{})
	require.Eventually(t, func() bool {
		page, err := evs.List(ctx, kube.Scope{Namespace: "demo"}, watch.ListOptions{})
		require.NoError(t, err)
		n := 0
		for _, e := range page.Items {
			if e.Reason == "SuccessfulCreate" && e.InvolvedObject.Kind == "ReplicaSet" && e.InvolvedObject.Name == "web" {
				n++
			}
		}
		return n == 3
	}, waitLong, tick, "one SuccessfulCreate event per pod")

	_, err = rss.SetScale(ctx, "demo", "web", 5, client.WriteOptions{})
	require.NoError(t, err)
	converges(images("nginx:1", 5), "scaled up")
	_, err = rss.SetScale(ctx, "demo", "web", 1, client.WriteOptions{})
	require.NoError(t, err)
	converges(images("nginx:1", 1), "scaled down")

	_, err = rss.Patch(ctx, "demo", "web", client.MergePatch,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:2"}]}}}}`), client.PatchOptions{})
	require.NoError(t, err)
	// The controller has seen the new template once it reports its
	// generation; a pod deleted before that may be replaced from the old one.
	require.Eventually(t, func() bool {
		rs, err := rss.Get(ctx, "demo", "web", client.GetOptions{})
		return err == nil && rs.Generation > 1 && rs.Status.ObservedGeneration == rs.Generation
	}, waitLong, tick, "the controller saw the template change")
	page, err := pods.List(ctx, kube.Scope{Namespace: "demo", LabelSelector: "app=web"}, watch.ListOptions{})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	require.NoError(t, pods.Delete(ctx, "demo", page.Items[0].Name, client.DeleteOptions{}))
	converges(images("nginx:2", 1), "a deleted pod is replaced from the new template")

	require.NoError(t, rss.Delete(ctx, "demo", "web", client.DeleteOptions{}))
	converges(nil, "the ReplicaSet's pods go with it")
}
