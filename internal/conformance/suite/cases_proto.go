package suite

import (
	"net/http"
	"slices"
	"sync"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// The protobuf cases decode into k8s.io/api's *corev1.Pod, whose generated
// Unmarshal makes the client ask for protobuf (with JSON as the fallback).
// The real server answers protobuf; the simulator, which speaks JSON only,
// answers JSON, so the same cases also check the fallback.
func protoCases() []Case {
	return []Case{
		{Name: "protobuf/list-and-watch-typed-pods", Run: testProtoListWatch},
		{Name: "protobuf/errors-and-gone", Run: testProtoErrors},
		{Name: "protobuf/informer-converges", Run: testProtoInformer},
		{Name: "protobuf/slim-type-embedding-objectmeta-reads-json", Run: testSlimTypeReadsJSON},
	}
}

// contentTypes records the Content-Type of every response a client gets.
type contentTypes struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []string
}

func (c *contentTypes) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil {
		c.mu.Lock()
		c.seen = append(c.seen, resp.Header.Get("Content-Type"))
		c.mu.Unlock()
	}
	return resp, err
}

// all returns the distinct content types seen, sorted.
func (c *contentTypes) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := slices.Clone(c.seen)
	slices.Sort(s)
	return slices.Compact(s)
}

// protoClient is a default client (protobuf for *corev1.Pod) for cfg that
// records the content types it receives.
func protoClient(t T, cfg *kube.Config) (*kube.Client, *contentTypes) {
	t.Helper()
	rt, err := cfg.RoundTripper()
	require.NoError(t, err)
	rec := &contentTypes{next: rt}
	cfg.HTTP.Transport = rec
	return newClient(t, cfg), rec
}

// requireEncoding checks the responses came in the encoding the target
// should answer: protobuf from the real server, JSON from the simulator.
func requireEncoding(t T, e *Env, rec *contentTypes) {
	t.Helper()
	want := []string{"application/json"}
	if e.Target.Name() == "real" {
		want = []string{kube.ContentTypeProtobuf, kube.ContentTypeProtobuf + ";stream=watch"}
	}
	for _, ct := range rec.all() {
		require.Contains(t, want, ct, "response content types %v", rec.all())
	}
}

// testProtoListWatch: paged lists and a watch of *corev1.Pod decode every
// field (a container's image, the pod's labels) and every event.
func testProtoListWatch(t T, e *Env) {
	c, rec := protoClient(t, e.Target.Config(Admin))
	names := podNames("pb", 25)
	createPods(t, e, names, map3("enc", "proto"))

	items, rv := listAll[*corev1.Pod](t, e, c, watch.ListOptions{Limit: 10})
	require.Equal(t, slices.Sorted(slices.Values(names)), namesOf(items), "the server lists in key order")
	for _, p := range items {
		require.Equal(t, "proto", p.Labels["enc"], p.Name)
		require.NotEmpty(t, p.Spec.Containers, p.Name)
		require.NotEmpty(t, p.Spec.Containers[0].Image, p.Name)
	}

	st, err := watch.Watch[*corev1.Pod](e.Ctx, c, kube.Pods, kube.Scope{Namespace: e.NS}, watch.WatchOptions{ResourceVersion: rv, AllowBookmarks: true})
	require.NoError(t, err)
	defer st.Close()
	_, err = e.Kube.LabelPod(e.Ctx, e.NS, names[3], "enc", "changed")
	require.NoError(t, err)
	require.NoError(t, e.Kube.DeletePod(e.Ctx, e.NS, names[4]))
	// Wait for both changes; other events (the server may touch a pod
	// again, say to set its status) must decode whole too.
	var changed, deleted bool
	for i := 0; !changed || !deleted; i++ {
		require.Less(t, i, 100, "no MODIFIED %s and DELETED %s among 100 events", names[3], names[4])
		ev, err := st.Next()
		require.NoError(t, err)
		if ev.Type == watch.Bookmark {
			continue
		}
		require.NotEmpty(t, ev.Object.Spec.Containers, "%s %s", ev.Type, ev.Object.Name)
		switch {
		case ev.Type == watch.Modified && ev.Object.Name == names[3]:
			changed = changed || ev.Object.Labels["enc"] == "changed"
		case ev.Type == watch.Deleted && ev.Object.Name == names[4]:
			deleted = true
		}
	}
	requireEncoding(t, e, rec)
}

// testProtoErrors: a refused request's Status and a watch's 410 ERROR event
// arrive intact in protobuf.
func testProtoErrors(t T, e *Env) {
	c, rec := protoClient(t, e.Target.Config(Admin))
	_, err := watch.List[*corev1.Pod](e.Ctx, c, kube.Pods, kube.Scope{Namespace: e.NS, LabelSelector: "a in (b"}, watch.ListOptions{})
	se, ok := kube.AsStatus(err)
	require.True(t, ok, "want a StatusError, got %v", err)
	require.EqualValues(t, http.StatusBadRequest, se.Code)
	require.Contains(t, se.Message, "unable to parse requirement", "the server's message survives")

	rv := createPods(t, e, podNames("pg", 1), nil)
	require.NoError(t, e.Target.Expire(e.Ctx, rv))
	sc, srec := protoClient(t, e.Target.StorageConfig())
	st, err := watch.Watch[*corev1.Pod](e.Ctx, sc, kube.Pods, kube.Scope{Namespace: e.NS}, watch.WatchOptions{ResourceVersion: rv})
	require.NoError(t, err, "the watch should open (200) and fail inside the stream")
	defer st.Close()
	_, err = st.Next()
	requireExpired(t, err, "protobuf watch from a compacted RV")
	requireEncoding(t, e, srec)
	requireEncoding(t, e, rec)
}

// testProtoInformer: streaming and paged informers of *corev1.Pod hold
// exactly the server's state after creates, updates and deletes.
func testProtoInformer(t T, e *Env) { testProtoInformerIn(t, e, storeModes[0]) }

// testProtoInformerIn is testProtoInformer with the informers' store in m;
// in StoreCompact the store keeps the protobuf messages the real server
// sent and decodes them on read.
func testProtoInformerIn(t T, e *Env, m storeMode) {
	c, rec := protoClient(t, e.Target.Config(Admin))
	names := podNames("pi", 200)
	createPods(t, e, names[:100], nil)
	streaming := runInformer(t, e, informer.Options[*corev1.Pod]{Client: c, Tuning: informer.Tuning{ListMode: informer.ListAuto, Store: m.mode}})
	paged := runInformer(t, e, informer.Options[*corev1.Pod]{Client: c, Tuning: informer.Tuning{ListMode: informer.ListPaged, PageSize: 30, Store: m.mode}})
	createPods(t, e, names[100:], nil)
	forEach(t, 40, func(i int) error {
		_, err := e.Kube.LabelPod(e.Ctx, e.NS, names[i], "step", "two")
		return err
	})
	forEach(t, 40, func(i int) error { return e.Kube.DeletePod(e.Ctx, e.NS, names[40+i]) })
	requireConverges(t, e, mergeViews(storeViews("streaming informer", streaming, m), storeViews("paged informer", paged, m)))
	p, ok := streaming.Store().Get(e.NS + "/" + names[0])
	require.True(t, ok)
	require.Equal(t, "two", p.Labels["step"])
	require.NotEmpty(t, p.Spec.Containers[0].Image)
	requireEncoding(t, e, rec)
	if m.compact() {
		requireSameObjects(t, e, c, watch.ListOptions{Limit: 50}, "streaming informer", streaming)
		requireSameObjects(t, e, c, watch.ListOptions{Limit: 50}, "paged informer", paged)
		requireRawEncoding(t, e, "streaming informer", streaming, true)
		requireRawEncoding(t, e, "paged informer", paged, true)
		requireCompactHealthy(t, "streaming informer", streaming, m)
		requireCompactHealthy(t, "paged informer", paged, m)
	}
}

// slimPod embeds metav1.ObjectMeta alone, as the README's slim types do: its
// method set holds ObjectMeta's generated Unmarshal, which would decode a
// whole Pod message as metadata. Lists, watches and gets must ask for JSON.
type slimPod struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		NodeName   string `json:"nodeName"`
		Containers []struct {
			Image string `json:"image"`
		} `json:"containers"`
	} `json:"spec"`
}

// testSlimTypeReadsJSON: a slim type embedding ObjectMeta lists, watches and
// gets whole objects from a server that speaks protobuf.
func testSlimTypeReadsJSON(t T, e *Env) {
	c, rec := protoClient(t, e.Target.Config(Admin))
	names := podNames("slim", 3)
	createPods(t, e, names, map3("enc", "slim"))
	items, rv := listAll[*slimPod](t, e, c, watch.ListOptions{})
	require.Equal(t, names, namesOf(items))
	for _, p := range items {
		require.Equal(t, e.NS, p.Namespace, p.Name)
		require.Equal(t, "slim", p.Labels["enc"], p.Name)
		require.NotEmpty(t, p.Spec.Containers, p.Name)
	}
	st, err := watch.Watch[*slimPod](e.Ctx, c, kube.Pods, kube.Scope{Namespace: e.NS}, watch.WatchOptions{ResourceVersion: rv})
	require.NoError(t, err)
	defer st.Close()
	_, err = e.Kube.LabelPod(e.Ctx, e.NS, names[0], "enc", "changed")
	require.NoError(t, err)
	ev, err := st.Next()
	require.NoError(t, err)
	require.Equal(t, names[0], ev.Object.Name)
	require.Equal(t, "changed", ev.Object.Labels["enc"])
	got, err := client.For(c, kube.Typed[*slimPod](kube.Pods), client.Options{}).Get(e.Ctx, e.NS, names[1], client.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, names[1], got.Name)
	require.NotEmpty(t, got.Spec.Containers)
	for _, ct := range rec.all() {
		require.False(t, kube.IsProtobuf(ct), "a slim type got a protobuf answer (%s)", ct)
	}
}
