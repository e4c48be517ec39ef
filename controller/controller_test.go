package controller_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
)

const (
	waitLong = 30 * time.Second
	tick     = 5 * time.Millisecond
)

// Obj is any object of these tests: metadata only.
type Obj struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Data              map[string]string `json:"data,omitempty"`
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func start(t *testing.T) (*simkit.Harness, *kube.Client) {
	t.Helper()
	h := simkit.Start(t, sim.Options{})
	require.NoError(t, h.Server.EnsureNamespace("demo"))
	c, err := kube.NewClient(&kube.Config{Host: h.URL})
	require.NoError(t, err)
	return h, c
}

func run(t *testing.T, m *controller.Manager) context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return cancel
}

func obj(name string, owner *metav1.OwnerReference) *Obj {
	o := &Obj{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}}
	if owner != nil {
		o.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return o
}

func ownerRef(kind, apiVersion, name string, controller bool) *metav1.OwnerReference {
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID("u-" + name), Controller: &controller}
}

// keys collects reconciled keys.
type keys struct {
	mu   sync.Mutex
	seen []controller.Key
}

func (k *keys) add(key controller.Key) {
	k.mu.Lock()
	k.seen = append(k.seen, key)
	k.mu.Unlock()
}

func (k *keys) count(key controller.Key) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for _, s := range k.seen {
		if s == key {
			n++
		}
	}
	return n
}

func (k *keys) has(key controller.Key) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, s := range k.seen {
		if s == key {
			return true
		}
	}
	return false
}

func TestWorkersStartOnlyAfterEveryCacheSynced(t *testing.T) {
	h, c := start(t)
	for i := range 50 {
		_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"cm-`+string(rune('a'+i%26))+string(rune('a'+i/26))+`"}}`))
		require.NoError(t, err)
		_, err = h.Server.Create("secrets", []byte(`{"metadata":{"namespace":"demo","name":"s-`+string(rune('a'+i%26))+string(rune('a'+i/26))+`"}}`))
		require.NoError(t, err)
	}
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet()})
	require.NoError(t, err)
	cms, err := controller.Cache(m, kube.Typed[*Obj](kube.ConfigMaps))
	require.NoError(t, err)
	secrets, err := controller.Cache(m, kube.Typed[*Obj](kube.Secrets))
	require.NoError(t, err)
	var firstSaw atomic.Int64
	firstSaw.Store(-1)
	var calls atomic.Int64
	_, err = controller.New(m, controller.Config[*Obj]{Name: "c", For: kube.Typed[*Obj](kube.ConfigMaps),
		Watches: []controller.Source{controller.Watches(kube.Typed[*Obj](kube.Secrets), func(*Obj) []controller.Key { return nil })},
		Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
			if calls.Add(1) == 1 {
				a, _ := cms.List(ctx, controller.ListOptions{})
				b, _ := secrets.List(ctx, controller.ListOptions{})
				firstSaw.Store(int64(len(a) + len(b)))
			}
			return controller.Result{}, nil
		}})
	require.NoError(t, err)
	run(t, m)
	require.Eventually(t, func() bool { return calls.Load() >= 50 }, waitLong, tick)
	require.EqualValues(t, 100, firstSaw.Load(), "the first reconcile saw both caches full")
	require.True(t, m.Synced())
}

func TestOwnsMapsToTheControllingOwnerEvenBeforeItIsCached(t *testing.T) {
	h, c := start(t)
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet()})
	require.NoError(t, err)
	var got keys
	_, err = controller.New(m, controller.Config[*Obj]{Name: "c", For: kube.Typed[*Obj](kube.Deployments),
		Owns: []controller.Source{controller.Owns(kube.Typed[*Obj](kube.ConfigMaps))},
		Reconcile: func(_ context.Context, key controller.Key) (controller.Result, error) {
			got.add(key)
			return controller.Result{}, nil
		}})
	require.NoError(t, err)
	run(t, m)
	cms := client.For(c, kube.Typed[*Obj](kube.ConfigMaps), client.Options{})
	for _, o := range []*Obj{
		obj("a", ownerRef("Deployment", "apps/v1", "web", true)),             // no such deployment yet
		obj("b", ownerRef("Deployment", "apps/v1", "not-controller", false)), // an owner, not the controller
		obj("c", ownerRef("Deployment", "extensions/v1beta1", "other-group", true)),
		obj("d", ownerRef("ReplicaSet", "apps/v1", "other-kind", true)),
	} {
		_, err := cms.Create(context.Background(), o, client.CreateOptions{})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return got.has(controller.Key{Namespace: "demo", Name: "web"}) }, waitLong, tick)
	// A marker after the others: once it arrives, they have all been handled.
	_, err = cms.Create(context.Background(), obj("z", ownerRef("Deployment", "apps/v1", "marker", true)), client.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return got.has(controller.Key{Namespace: "demo", Name: "marker"}) }, waitLong, tick)
	for _, name := range []string{"not-controller", "other-group", "other-kind", "a", "b", "c", "d"} {
		require.False(t, got.has(controller.Key{Namespace: "demo", Name: name}), name)
	}
	_ = h

	// An object that changes owner enqueues both.
	moved := obj("a", ownerRef("Deployment", "apps/v1", "api", true))
	cur, err := cms.Get(context.Background(), "demo", "a", client.GetOptions{})
	require.NoError(t, err)
	moved.ResourceVersion = cur.ResourceVersion
	got = keys{}
	_, err = cms.Update(context.Background(), moved, client.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return got.has(controller.Key{Namespace: "demo", Name: "api"}) && got.has(controller.Key{Namespace: "demo", Name: "web"})
	}, waitLong, tick)
}

func TestPredicatesFilterUpdates(t *testing.T) {
	gen := controller.GenerationChanged[*Obj]()
	lab := controller.LabelsChanged[*Obj]()
	ann := controller.AnnotationsChanged[*Obj]()
	rv := controller.ResourceVersionChanged[*Obj]()
	a := &Obj{ObjectMeta: metav1.ObjectMeta{Generation: 1, ResourceVersion: "1", Labels: map[string]string{"x": "1"}}}
	b := &Obj{ObjectMeta: metav1.ObjectMeta{Generation: 1, ResourceVersion: "2", Labels: map[string]string{"x": "1"}, Annotations: map[string]string{"n": "1"}}}
	c := &Obj{ObjectMeta: metav1.ObjectMeta{Generation: 2, ResourceVersion: "3", Labels: map[string]string{"x": "2"}}}
	require.False(t, gen.Update(a, b))
	require.True(t, gen.Update(b, c))
	require.False(t, lab.Update(a, b))
	require.True(t, lab.Update(b, c))
	require.True(t, ann.Update(a, b))
	require.False(t, ann.Update(a, c))
	require.False(t, rv.Update(a, a))
	require.True(t, rv.Update(a, b))
	either := controller.Or(gen, ann)
	require.True(t, either.Update(a, b))
	require.False(t, either.Update(a, a))
}

// now retries a failed key at once.
type now struct{}

func (now) When(controller.Key) time.Duration { return 0 }
func (now) Forget(controller.Key)             {}
func (now) NumRequeues(controller.Key) int    { return 0 }

func TestTerminalErrorsAreNotRetried(t *testing.T) {
	_, c := start(t)
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet()})
	require.NoError(t, err)
	var got keys
	_, err = controller.New(m, controller.Config[*Obj]{Name: "c", For: kube.Typed[*Obj](kube.ConfigMaps), RateLimiter: now{},
		Reconcile: func(_ context.Context, key controller.Key) (controller.Result, error) {
			got.add(key)
			switch key.Name {
			case "bad":
				return controller.Result{}, controller.Terminal(errors.New("invalid spec"))
			case "flaky":
				if got.count(key) == 1 {
					return controller.Result{}, errors.New("try again")
				}
			}
			return controller.Result{}, nil
		}})
	require.NoError(t, err)
	run(t, m)
	cms := client.For(c, kube.Typed[*Obj](kube.ConfigMaps), client.Options{})
	ctx := context.Background()
	for _, name := range []string{"flaky", "bad"} {
		_, err = cms.Create(ctx, obj(name, nil), client.CreateOptions{})
		require.NoError(t, err)
		require.Eventually(t, func() bool { return got.has(controller.Key{Namespace: "demo", Name: name}) }, waitLong, tick)
	}
	// One worker, retries at once: a retry of bad would be queued before
	// the marker's event arrives.
	_, err = cms.Create(ctx, obj("marker", nil), client.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return got.has(controller.Key{Namespace: "demo", Name: "marker"}) }, waitLong, tick)
	require.Equal(t, 2, got.count(controller.Key{Namespace: "demo", Name: "flaky"}), "an error is retried")
	require.Equal(t, 1, got.count(controller.Key{Namespace: "demo", Name: "bad"}), "a terminal error is not")
}

func TestCacheReadsHandOutCopies(t *testing.T) {
	h, c := start(t)
	_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"a","labels":{"app":"x"}},"data":{"k":"v"}}`))
	require.NoError(t, err)
	_, err = h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"b"}}`))
	require.NoError(t, err)
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet()})
	require.NoError(t, err)
	cms, err := controller.Cache(m, kube.Typed[*Obj](kube.ConfigMaps))
	require.NoError(t, err)
	run(t, m)
	ctx := context.Background()
	a, ok, err := cms.Get(ctx, controller.Key{Namespace: "demo", Name: "a"})
	require.NoError(t, err)
	require.True(t, ok)
	a.Data["k"] = "changed by the caller"
	a.Labels["app"] = "changed"
	again, _, _ := cms.Get(ctx, controller.Key{Namespace: "demo", Name: "a"})
	require.Equal(t, "v", again.Data["k"], "the cache is not the caller's to change")
	require.Equal(t, "x", again.Labels["app"])

	sel, err := cms.List(ctx, controller.ListOptions{Namespace: "demo", LabelSelector: "app=x"})
	require.NoError(t, err)
	require.Len(t, sel, 1)
	_, err = cms.List(ctx, controller.ListOptions{LabelSelector: "app in (("})
	require.Error(t, err)
	_, ok, err = cms.Get(ctx, controller.Key{Namespace: "demo", Name: "none"})
	require.NoError(t, err)
	require.False(t, ok)
}

func TestProbes(t *testing.T) {
	_, c := start(t)
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet()})
	require.NoError(t, err)
	_, err = controller.Cache(m, kube.Typed[*Obj](kube.ConfigMaps))
	require.NoError(t, err)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	code := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	st, _ := code("/readyz")
	require.Equal(t, http.StatusServiceUnavailable, st, "not ready before Run")
	run(t, m)
	require.Eventually(t, func() bool { st, _ := code("/readyz"); return st == http.StatusOK }, waitLong, tick)
	st, body := code("/readyz")
	require.Equal(t, http.StatusOK, st)
	require.True(t, strings.Contains(body, `"synced":true`) && strings.Contains(body, `"watching":true`), body)
	st, _ = code("/healthz")
	require.Equal(t, http.StatusOK, st)
}

func TestConfigErrors(t *testing.T) {
	_, c := start(t)
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet()})
	require.NoError(t, err)
	noop := func(context.Context, controller.Key) (controller.Result, error) { return controller.Result{}, nil }
	_, err = controller.New(m, controller.Config[*Obj]{For: kube.Typed[*Obj](kube.ConfigMaps), Reconcile: noop})
	require.Error(t, err, "no name")
	_, err = controller.New(m, controller.Config[*Obj]{Name: "a", For: kube.Typed[*Obj](kube.ConfigMaps), Reconcile: noop})
	require.NoError(t, err)
	_, err = controller.New(m, controller.Config[*Obj]{Name: "a", For: kube.Typed[*Obj](kube.ConfigMaps), Reconcile: noop})
	require.Error(t, err, "a second controller named a")
	_, err = controller.New(m, controller.Config[*Obj]{Name: "b", For: kube.Typed[*Obj](kube.ConfigMaps), Reconcile: noop,
		Owns: []controller.Source{controller.Owns(kube.Typed[*metav1.PartialObjectMetadata](kube.Pods))}})
	require.NoError(t, err, "an embedded ObjectMeta has owner references")
	_, err = controller.NewManager(nil, controller.ManagerOptions{})
	require.Error(t, err)
}

func TestShutdownLetsInFlightReconcilesFinishBeforeInformersStop(t *testing.T) {
	h, c := start(t)
	_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"a"}}`))
	require.NoError(t, err)
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet(), ShutdownTimeout: time.Minute})
	require.NoError(t, err)
	cms, err := controller.Cache(m, kube.Typed[*Obj](kube.ConfigMaps))
	require.NoError(t, err)
	inside := make(chan struct{})
	stopping := make(chan struct{})
	var sawCache atomic.Bool
	_, err = controller.New(m, controller.Config[*Obj]{Name: "c", For: kube.Typed[*Obj](kube.ConfigMaps),
		Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
			close(inside)
			<-stopping
			// The manager's context has ended; the informers still run.
			_, ok, err := cms.Get(ctx, key)
			sawCache.Store(ok && err == nil && ctx.Err() == nil)
			return controller.Result{}, nil
		}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	<-inside
	cancel()
	close(stopping)
	require.NoError(t, <-done)
	require.True(t, sawCache.Load(), "the in-flight reconcile read the cache and kept its context")
	require.Eventually(t, func() bool { return h.Server.Stats().ActiveWatches == 0 }, waitLong, tick, "informers stopped after")
}

func TestMetricsOfInformersAndControllers(t *testing.T) {
	h, c := start(t)
	_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"a"}}`))
	require.NoError(t, err)
	reg := metrics.NewSet()
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet(), Metrics: reg})
	require.NoError(t, err)
	var done atomic.Bool
	_, err = controller.New(m, controller.Config[*Obj]{Name: "stamper", For: kube.Typed[*Obj](kube.ConfigMaps),
		Reconcile: func(context.Context, controller.Key) (controller.Result, error) {
			done.Store(true)
			return controller.Result{}, nil
		}})
	require.NoError(t, err)
	run(t, m)
	require.Eventually(t, func() bool { return done.Load() }, waitLong, tick)
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	var body string
	require.Eventually(t, func() bool {
		resp, err := http.Get(srv.URL + "/metrics")
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return strings.Contains(body, `kwatch_reconcile_total{name="stamper"`)
	}, waitLong, tick)
	for _, want := range []string{`kwatch_informer_synced{name="configmaps"} 1`, `kwatch_informer_objects{name="configmaps"} 1`,
		`workqueue_adds_total{name="stamper"}`} {
		require.Contains(t, body, want)
	}
}

func TestIndexedCacheReads(t *testing.T) {
	h, c := start(t)
	for _, o := range []string{`{"metadata":{"namespace":"demo","name":"a","labels":{"team":"x"}}}`,
		`{"metadata":{"namespace":"demo","name":"b","labels":{"team":"y"}}}`,
		`{"metadata":{"namespace":"demo","name":"c","labels":{"team":"x"}}}`} {
		_, err := h.Server.Create("configmaps", []byte(o))
		require.NoError(t, err)
	}
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet()})
	require.NoError(t, err)
	byTeam := func(o *Obj) ([]string, error) { return []string{o.Labels["team"]}, nil }
	require.NoError(t, controller.Index(m, kube.Typed[*Obj](kube.ConfigMaps), "team", byTeam))
	require.Error(t, controller.Index(m, kube.Typed[*Obj](kube.ConfigMaps), "team", byTeam), "defined twice")
	cms, err := controller.Cache(m, kube.Typed[*Obj](kube.ConfigMaps))
	require.NoError(t, err)
	require.Error(t, controller.Index(m, kube.Typed[*Obj](kube.ConfigMaps), "late", byTeam), "after the cache is built")
	run(t, m)
	xs, err := cms.ByIndex(context.Background(), "team", "x")
	require.NoError(t, err)
	var names []string
	for _, o := range xs {
		names = append(names, o.Name)
	}
	require.ElementsMatch(t, []string{"a", "c"}, names)
	_, err = cms.ByIndex(context.Background(), "nope", "x")
	require.Error(t, err)
}

func TestScopedCachesAreTheirOwnInformers(t *testing.T) {
	h, c := start(t)
	require.NoError(t, h.Server.EnsureNamespace("other"))
	for _, o := range []string{`{"metadata":{"namespace":"demo","name":"a","labels":{"tier":"web"}}}`,
		`{"metadata":{"namespace":"demo","name":"b","labels":{"tier":"db"}}}`,
		`{"metadata":{"namespace":"other","name":"c","labels":{"tier":"web"}}}`} {
		_, err := h.Server.Create("configmaps", []byte(o))
		require.NoError(t, err)
	}
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet(), Namespace: "demo"})
	require.NoError(t, err)
	all, err := controller.Cache(m, kube.Typed[*Obj](kube.ConfigMaps))
	require.NoError(t, err)
	web, err := controller.CacheIn(m, kube.Typed[*Obj](kube.ConfigMaps), kube.Scope{LabelSelector: "tier=web"})
	require.NoError(t, err)
	other, err := controller.CacheIn(m, kube.Typed[*Obj](kube.ConfigMaps), kube.Scope{Namespace: "other"})
	require.NoError(t, err)
	run(t, m)
	names := func(r *controller.Reader[*Obj]) []string {
		objs, err := r.List(context.Background(), controller.ListOptions{})
		require.NoError(t, err)
		var out []string
		for _, o := range objs {
			out = append(out, o.Namespace+"/"+o.Name)
		}
		return out
	}
	require.ElementsMatch(t, []string{"demo/a", "demo/b"}, names(all), "the manager's namespace (List is in no order)")
	require.Equal(t, []string{"demo/a"}, names(web), "the selector, in the manager's namespace")
	require.Equal(t, []string{"other/c"}, names(other))
	require.Eventually(t, func() bool { return h.Server.Stats().ActiveWatches == 3 }, waitLong, tick, "three informers")
	require.Len(t, m.Health(), 3)
}
