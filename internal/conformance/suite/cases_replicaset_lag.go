package suite

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/examples/replicaset"
	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/internal/conformance/harness"
	"github.com/kwatch/kwatch/kube"
)

// rsLag is how far the controller's caches lag the server in
// testReplicaSetUnderLag.
const rsLag = time.Second

// podCensus counts, from an informer of its own on the server (no lag),
// every pod of the namespace that ever existed and the most alive at once.
type podCensus struct {
	mu      sync.Mutex
	seen    map[string]bool // uids ever added
	live    map[string]bool
	maxLive int
	last    time.Time // the last add or delete
}

func (c *podCensus) OnAdd(p *corev1.Pod, _ bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.DeletionTimestamp == nil {
		c.seen[string(p.UID)], c.live[string(p.UID)] = true, true
	}
	c.maxLive, c.last = max(c.maxLive, len(c.live)), time.Now()
}

func (c *podCensus) OnUpdate(_, p *corev1.Pod) {
	if p.DeletionTimestamp != nil {
		c.OnDelete(p, false)
	}
}

func (c *podCensus) OnDelete(p *corev1.Pod, _ bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live[string(p.UID)] {
		delete(c.live, string(p.UID))
		c.last = time.Now()
	}
}

func (c *podCensus) counts() (created, maxLive int, quietFor time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen), c.maxLive, time.Since(c.last)
}

// testReplicaSetUnderLag runs examples/replicaset (which keeps no
// expectations of its own) with its caches a second behind the server,
// through a harness.LagProxy holding the pods' and ReplicaSets' watch
// bytes: scaled to 5, 30, 3 and 20, it never has more pods alive than the
// largest step's 30 and creates exactly the 47 pods the steps need.
func testReplicaSetUnderLag(t T, e *Env) {
	p, err := harness.NewLagProxy(e.Target.Config(Admin))
	require.NoError(t, err)
	require.NoError(t, p.SetLag("pods", rsLag))
	require.NoError(t, p.SetLag("replicasets", rsLag))
	ctx, cancel := context.WithCancel(e.Ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Serve(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })

	direct := newClient(t, e.Target.Config(Admin))
	census := &podCensus{seen: map[string]bool{}, live: map[string]bool{}}
	inf, err := informer.New(informer.Options[*corev1.Pod]{Client: direct, Resource: kube.Pods, Scope: kube.Scope{Namespace: e.NS},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	_, err = inf.AddHandler(census, informer.HandlerOptions{Delivery: informer.Ordered, Buffer: 1 << 16})
	require.NoError(t, err)
	wg.Go(func() { _ = inf.Run(ctx) })
	require.True(t, inf.WaitForSync(e.Ctx))

	mgr, err := controller.NewManager(newClient(t, &kube.Config{Host: p.URL}), controller.ManagerOptions{Namespace: e.NS,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	require.NoError(t, replicaset.Setup(mgr, 2))
	wg.Go(func() { _ = mgr.Run(ctx) })

	rss := client.For(direct, kube.Typed[*appsv1.ReplicaSet](kube.ReplicaSets), client.Options{})
	replicas := int32(5)
	labels := map[string]string{"app": "lagged"}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: e.NS, Name: "lagged"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1"}}}}}}
	_, err = rss.Create(e.Ctx, rs, client.CreateOptions{})
	require.NoError(t, err)
	settle := func(want int) {
		t.Helper()
		eventually(t, e, rsConverge, "the pods settle", func() bool {
			census.mu.Lock()
			n := len(census.live)
			census.mu.Unlock()
			_, _, quiet := census.counts()
			return n == want && quiet > 3*rsLag
		})
	}
	settle(5)
	for _, n := range []int32{30, 3, 20} {
		_, err = rss.SetScale(e.Ctx, e.NS, "lagged", n, client.WriteOptions{})
		require.NoError(t, err)
		settle(int(n))
	}
	created, maxLive, _ := census.counts()
	require.Equal(t, 30, maxLive, "never more pods alive than the largest step's replicas")
	require.Equal(t, 5+25+17, created, "exactly the pods the steps need")
	require.NoError(t, rss.Delete(e.Ctx, e.NS, "lagged", client.DeleteOptions{}))
	settle(0)
}
