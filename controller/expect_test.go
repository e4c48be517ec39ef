package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/metrics/metricstest"
)

// lagged serves h with every watch response's bytes held back for d: the
// cache lags the server by d, as behind a slow API server's watch cache.
func lagged(h http.Handler, d *atomic.Int64) http.Handler {
	return heldBy(h, func() <-chan struct{} {
		ch := make(chan struct{})
		time.AfterFunc(time.Duration(d.Load()), func() { close(ch) })
		return ch
	})
}

// heldBy serves h with each watch response's bytes passed on, in order,
// once the channel hold returned when they were written is closed.
func heldBy(h http.Handler, hold func() <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query().Get("watch"); q != "true" && q != "1" {
			h.ServeHTTP(w, r)
			return
		}
		hw := &heldWriter{ResponseWriter: w, hold: hold, ch: make(chan heldChunk, 1<<16)}
		done := make(chan struct{})
		go func() { defer close(done); hw.pump(r.Context()) }()
		h.ServeHTTP(hw, r)
		close(hw.ch)
		<-done
	})
}

type heldChunk struct {
	until <-chan struct{}
	b     []byte
}

type heldWriter struct {
	http.ResponseWriter
	hold func() <-chan struct{}
	ch   chan heldChunk
}

func (w *heldWriter) Write(p []byte) (int, error) {
	w.ch <- heldChunk{w.hold(), append([]byte(nil), p...)}
	return len(p), nil
}

// Flush is the pump's: it flushes each chunk when it passes it on.
func (w *heldWriter) Flush() {}

func (w *heldWriter) pump(ctx context.Context) {
	f, _ := w.ResponseWriter.(http.Flusher)
	for c := range w.ch {
		select {
		case <-c.until:
		case <-ctx.Done():
			continue // the client went away: drain
		}
		if _, err := w.ResponseWriter.Write(c.b); err != nil {
			continue // the client went away: drain
		}
		if f != nil {
			f.Flush()
		}
	}
}

// serveLagged serves srv over an in-memory network with watches lagging
// by d, until the test ends, and returns a client on it.
func serveLagged(t *testing.T, srv *sim.Server, d time.Duration) *kube.Client {
	t.Helper()
	var lag atomic.Int64
	lag.Store(int64(d))
	return serveLagging(t, srv, &lag)
}

// serveLagging is serveLagged with a lag the test may change.
func serveLagging(t *testing.T, srv *sim.Server, lag *atomic.Int64) *kube.Client {
	t.Helper()
	var mn testutil.MemNet
	ln, err := mn.Listen("api:80")
	require.NoError(t, err)
	hs := &http.Server{Handler: lagged(srv.Handler(), lag)}
	done := make(chan struct{})
	go func() { _ = hs.Serve(ln); close(done) }()
	tr := mn.Transport()
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = hs.Close()
		<-done
	})
	c, err := kube.NewClient(&kube.Config{Host: "http://api:80", HTTP: kube.HTTPConfig{Transport: tr}, RateLimit: kube.RateLimitConfig{QPS: -1}})
	require.NoError(t, err)
	return c
}

// replicaSet is a ReplicaSet controller written the obvious way, with no
// expectations of its own: ConfigMap "set" says how many replicas
// (data.replicas); each replica is a ConfigMap it owns, made with
// generateName. It counts its creates and deletes.
type replicaSet struct {
	children *controller.Reader[*Obj]
	parents  *controller.Reader[*Obj]
	cms      *client.Client[*Obj]
	creates  atomic.Int64
	deletes  atomic.Int64
}

func (rs *replicaSet) reconcile(ctx context.Context, key controller.Key) (controller.Result, error) {
	parent, ok, err := rs.parents.Get(ctx, key)
	if err != nil || !ok {
		return controller.Result{}, err
	}
	return rs.reconcileObject(ctx, parent)
}

// reconcileObject is reconcile once the set is read: the controller's
// ReconcileObject.
func (rs *replicaSet) reconcileObject(ctx context.Context, parent *Obj) (controller.Result, error) {
	key := controller.KeyOf(parent)
	want, _ := strconv.Atoi(parent.Data["replicas"])
	have, err := rs.children.List(ctx, controller.ListOptions{Namespace: key.Namespace, LabelSelector: "owner=" + key.Name})
	if err != nil {
		return controller.Result{}, err
	}
	slices.SortFunc(have, func(a, b *Obj) int { return cmpStrings(a.Name, b.Name) })
	for i := len(have); i < want; i++ {
		child := &Obj{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, GenerateName: key.Name + "-",
			Labels:          map[string]string{"owner": key.Name},
			OwnerReferences: []metav1.OwnerReference{*ownerRef("ConfigMap", "v1", key.Name, true)}}}
		if _, err := rs.cms.Create(ctx, child, client.CreateOptions{}); err != nil {
			return controller.Result{}, err
		}
		rs.creates.Add(1)
	}
	for _, extra := range have[min(want, len(have)):] {
		err := rs.cms.Delete(ctx, extra.Namespace, extra.Name, client.DeleteOptions{})
		if err != nil && !kube.IsNotFound(err) {
			return controller.Result{}, err
		}
		rs.deletes.Add(1)
	}
	return controller.Result{}, nil
}

func cmpStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// runReplicaSet runs the controller on a manager over c until the test
// ends.
func runReplicaSet(t *testing.T, c *kube.Client, opts controller.ManagerOptions) *replicaSet {
	t.Helper()
	return runReplicaSetWith(t, c, opts, false)
}

// runReplicaSetWith is runReplicaSet; object has the controller
// reconcile through ReconcileObject instead of Reconcile.
func runReplicaSetWith(t *testing.T, c *kube.Client, opts controller.ManagerOptions, object bool) *replicaSet {
	t.Helper()
	opts.Namespace, opts.Logger = "demo", quiet()
	m, err := controller.NewManager(c, opts)
	require.NoError(t, err)
	rs := &replicaSet{cms: client.For(m.Client(), kube.Typed[*Obj](kube.ConfigMaps), client.Options{})}
	rs.parents, err = controller.CacheIn(m, kube.Typed[*Obj](kube.ConfigMaps), kube.Scope{LabelSelector: "role=set"})
	require.NoError(t, err)
	rs.children, err = controller.CacheIn(m, kube.Typed[*Obj](kube.ConfigMaps), kube.Scope{LabelSelector: "owner"})
	require.NoError(t, err)
	cfg := controller.Config[*Obj]{Name: "replicaset", For: kube.Typed[*Obj](kube.ConfigMaps),
		ForScope:  kube.Scope{LabelSelector: "role=set"},
		Owns:      []controller.Source{controller.OwnsIn(kube.Typed[*Obj](kube.ConfigMaps), kube.Scope{LabelSelector: "owner"})},
		Reconcile: rs.reconcile}
	if object {
		cfg.Reconcile, cfg.ReconcileObject = nil, rs.reconcileObject
	}
	_, err = controller.New(m, cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	return rs
}

// scale sets the set's replicas on the server and lets the controller
// settle: fake time runs on until nothing is left to do.
func scale(t *testing.T, srv *sim.Server, n int) {
	t.Helper()
	scaleTo(t, srv, n)
	for range 20 { // each round: the lag, then whatever it set off
		time.Sleep(2 * time.Second)
		synctest.Wait()
	}
}

// scaleTo writes the set's replicas on the server.
func scaleTo(t *testing.T, srv *sim.Server, n int) {
	t.Helper()
	body := []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"set","labels":{"role":"set"}},"data":{"replicas":"%d"}}`, n))
	if _, err := srv.Get("configmaps", "demo", "set"); err == nil {
		_, err = srv.Update("configmaps", body)
		require.NoError(t, err)
	} else {
		_, err = srv.Create("configmaps", body)
		require.NoError(t, err)
	}
}

func children(t *testing.T, srv *sim.Server) int {
	t.Helper()
	_, objs, err := srv.Snapshot("configmaps")
	require.NoError(t, err)
	n := 0
	for _, o := range objs {
		var cm Obj
		require.NoError(t, json.Unmarshal(o.JSON, &cm))
		if cm.Labels["owner"] == "set" {
			n++
		}
	}
	return n
}

// TestObviousReplicaSetIsCorrectUnderLag runs the obvious controller with
// the manager's defaults while the caches lag the server by a second:
// every scale step ends with exactly the replicas asked for, made with
// exactly as many creates and deletes as the steps need, whether it
// reads the set itself (Reconcile) or is handed it (ReconcileObject).
// Without the expectations (ExpectationTimeout < 0) the same controller
// creates replicas again that its cache has not shown yet.
func TestObviousReplicaSetIsCorrectUnderLag(t *testing.T) {
	for _, tc := range []struct {
		name   string
		expect time.Duration
		object bool // through ReconcileObject
	}{{"defaults", 0, false}, {"ReconcileObject", 0, true}, {"without expectations", -1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv, err := sim.New(sim.Options{})
				require.NoError(t, err)
				require.NoError(t, srv.EnsureNamespace("demo"))
				rs := runReplicaSetWith(t, serveLagged(t, srv, time.Second), controller.ManagerOptions{ExpectationTimeout: tc.expect}, tc.object)
				var creates, deletes int64
				var mu sync.Mutex
				step := func(n, wantCreates, wantDeletes int) {
					scale(t, srv, n)
					mu.Lock()
					defer mu.Unlock()
					creates += int64(wantCreates)
					deletes += int64(wantDeletes)
					if tc.expect < 0 {
						return
					}
					require.Equal(t, n, children(t, srv), "replicas on the server after scaling to %d", n)
					require.Equal(t, creates, rs.creates.Load(), "creates after scaling to %d", n)
					require.Equal(t, deletes, rs.deletes.Load(), "deletes after scaling to %d", n)
				}
				defer func() { t.Logf("creates %d, deletes %d", rs.creates.Load(), rs.deletes.Load()) }()
				step(5, 5, 0)
				step(30, 25, 0)
				step(3, 0, 27)
				step(20, 17, 0)
				if tc.expect < 0 {
					require.Greater(t, rs.creates.Load()+rs.deletes.Load(), creates+deletes,
						"without expectations the lagging cache should have made the controller write more than needed")
				}
			})
		})
	}
}

// TestExpectationBound checks the bound, with its default of 30 s: the
// caches lag the server by 50 s. The set is created at 0 and scaled to 2
// at 10 s; the controller sees it at 50 s and creates one replica, which
// its cache will show at 100 s. It sees the scale at 60 s: that reconcile
// waits for the create, and runs at 80 s, 30 s after it, on the cache it
// has (no replica yet), so it creates two, counted as a timeout. When the
// lag ends, the controller settles on two.
func TestExpectationBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := sim.New(sim.Options{})
		require.NoError(t, err)
		require.NoError(t, srv.EnsureNamespace("demo"))
		reg := metrics.NewSet()
		var lag atomic.Int64
		lag.Store(int64(50 * time.Second))
		rs := runReplicaSet(t, serveLagging(t, srv, &lag), controller.ManagerOptions{Metrics: reg})
		t0 := time.Now()
		at := func(d time.Duration) {
			time.Sleep(time.Until(t0.Add(d)))
			synctest.Wait()
		}
		counter := func(name string) float64 {
			return metricstest.Scrape(t, reg)[name+`{controller="replicaset"}`]
		}
		scaleTo(t, srv, 1)
		at(10 * time.Second)
		scaleTo(t, srv, 2)
		at(51 * time.Second)
		require.EqualValues(t, 1, rs.creates.Load(), "the first reconcile creates one")
		at(79 * time.Second)
		require.EqualValues(t, 1, rs.creates.Load(), "the second reconcile waits for the first create")
		require.EqualValues(t, 1, counter("kwatch_expectation_waits_total"))
		require.Zero(t, counter("kwatch_expectation_timeouts_total"))
		at(81 * time.Second)
		require.EqualValues(t, 3, rs.creates.Load(), "past the bound the reconcile runs on the lagging cache")
		require.EqualValues(t, 1, counter("kwatch_expectation_timeouts_total"))
		lag.Store(0)
		at(10 * time.Minute)
		require.Equal(t, 2, children(t, srv))
	})
}

// TestReadYourOwnWrite checks that within a reconcile a Get of an object
// the process just wrote returns the written version, though the cache
// lags the server by a second.
func TestReadYourOwnWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := sim.New(sim.Options{})
		require.NoError(t, err)
		require.NoError(t, srv.EnsureNamespace("demo"))
		m, err := controller.NewManager(serveLagged(t, srv, time.Second), controller.ManagerOptions{Namespace: "demo", Logger: quiet()})
		require.NoError(t, err)
		cms := client.For(m.Client(), kube.Typed[*Obj](kube.ConfigMaps), client.Options{})
		cache, err := controller.Cache(m, kube.Typed[*Obj](kube.ConfigMaps))
		require.NoError(t, err)
		type read struct{ wrote, got string }
		reads := make(chan read, 10)
		_, err = controller.New(m, controller.Config[*Obj]{Name: "counter", For: kube.Typed[*Obj](kube.ConfigMaps),
			Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
				cur, ok, err := cache.Get(ctx, key)
				if err != nil || !ok || cur.Data["n"] != "" {
					return controller.Result{}, err
				}
				cur.Data = map[string]string{"n": "1"}
				up, err := cms.Update(ctx, cur, client.UpdateOptions{})
				if err != nil {
					return controller.Result{}, err
				}
				again, _, err := cache.Get(ctx, key)
				if err != nil {
					return controller.Result{}, err
				}
				reads <- read{up.ResourceVersion, again.ResourceVersion}
				return controller.Result{}, nil
			}})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		defer func() { cancel(); require.NoError(t, <-done) }()
		_, err = srv.Create("configmaps", []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"a"}}`))
		require.NoError(t, err)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		require.Len(t, reads, 1)
		r := <-reads
		require.Equal(t, r.wrote, r.got, "the Get after the update returns the updated version")
	})
}
