package controller_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/shard"
)

// These helpers run a simulated API server and sharded managers with
// the default timings inside a testing/synctest bubble: each replica
// reaches the server over a MemNet of its own, through a handler that
// can refuse some of its requests.

// bubble is the server of one synctest test.
type bubble struct {
	t   *testing.T
	srv *sim.Server
	rec *overlapRecorder
}

func newBubble(t *testing.T) *bubble {
	t.Helper()
	srv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	require.NoError(t, srv.EnsureNamespace("demo"))
	return &bubble{t: t, srv: srv, rec: newOverlapRecorder()}
}

// bubbleReplica is one sharded manager of a bubble test.
type bubbleReplica struct {
	id     string
	mgr    *controller.Manager
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
	// refuse, when set, answers 500 to the requests it matches.
	refuse atomic.Pointer[func(*http.Request) bool]
	// dead cuts the replica off: its requests are aborted (crash).
	dead atomic.Bool
	nets []*testutil.MemNet // its links, set before Run
}

// stop cancels the replica and returns Run's error (once).
func (r *bubbleReplica) stop() error {
	r.once.Do(func() {
		r.cancel()
		r.err = <-r.done
	})
	return r.err
}

// crash cuts the replica off the server (its requests are aborted, its
// connections closed), then stops it: its Lease is never released, as
// after kill -9.
func (r *bubbleReplica) crash() {
	r.dead.Store(true)
	for _, n := range r.nets {
		n.CutAll()
	}
	_ = r.stop()
}

func (r *bubbleReplica) owns(key string) bool { return r.mgr.Shard().Owns(key) }

// refuseWhile has the server answer 500 to the replica's requests that
// match; nil lets every request through again.
func (r *bubbleReplica) refuseWhile(match func(*http.Request) bool) {
	if match == nil {
		r.refuse.Store(nil)
		return
	}
	r.refuse.Store(&match)
}

// replicaSpec says how a bubble replica's ConfigMap controller (owning
// Secrets) runs. The ring always has the default timings.
type replicaSpec struct {
	mode  shard.Mode
	scope kube.Scope                // the controller's ForScope
	mgr   controller.ManagerOptions // its logger and sharding are set by startWith
	// workers reconcile at once; zero means 4.
	workers int
	// metrics, when set, receives the ring's metrics.
	metrics *metrics.Set
	// reconcile makes the replica's reconciler from its client (which has
	// no client-side rate limit); nil records each reconcile in b.rec.
	reconcile func(id string, c *kube.Client) controller.Reconciler
	// reconcileObject, when set, is the controller's ReconcileObject
	// instead (reconcile is then unused).
	reconcileObject func(id string) func(context.Context, *Obj) (controller.Result, error)
}

// start runs a Label-mode replica whose reconciles are recorded.
func (b *bubble) start(id string, forScope kube.Scope, opts controller.ManagerOptions) *bubbleReplica {
	b.t.Helper()
	return b.startWith(id, replicaSpec{mode: shard.Label, scope: forScope, mgr: opts})
}

// startWith runs a sharded replica as spec says, with the default ring
// timings, until the test ends.
func (b *bubble) startWith(id string, spec replicaSpec) *bubbleReplica {
	t := b.t
	t.Helper()
	r := &bubbleReplica{id: id, done: make(chan error, 1)}
	c := b.connect(id, r, -1)
	opts := spec.mgr
	opts.Logger, opts.Sharding = quiet(), &shard.Config{Namespace: "demo", Ring: "cms", Identity: id, Mode: spec.mode,
		Client: b.connect(id+"-ring", r, 0)}
	if spec.metrics != nil {
		opts.Sharding.Metrics = spec.metrics
	}
	reconcile := b.recorded(id)
	if spec.reconcile != nil {
		reconcile = spec.reconcile(id, c)
	}
	var err error
	r.mgr, err = controller.NewManager(c, opts)
	require.NoError(t, err)
	cfg := controller.Config[*Obj]{Name: "cms", For: kube.Typed[*Obj](kube.ConfigMaps), ForScope: spec.scope, Workers: cmp.Or(spec.workers, 4),
		Owns: []controller.Source{controller.Owns(kube.Typed[*Obj](kube.Secrets))}, Reconcile: reconcile}
	if spec.reconcileObject != nil {
		cfg.Reconcile, cfg.ReconcileObject = nil, spec.reconcileObject(id)
	}
	_, err = controller.New(r.mgr, cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- r.mgr.Run(ctx) }()
	t.Cleanup(func() {
		if err := r.stop(); !r.dead.Load() {
			require.NoError(t, err)
		}
	})
	return r
}

// recorded is a reconciler that records each reconcile in b.rec.
func (b *bubble) recorded(id string) controller.Reconciler {
	return func(ctx context.Context, key controller.Key) (controller.Result, error) {
		b.rec.start(id, key.String())
		b.rec.end(id, key.String())
		return controller.Result{}, nil
	}
}

// connect serves the bubble's server to a client of its own (with the
// given QPS) on a new MemNet at name, refusing what r.refuse matches and
// aborting every request once r is dead.
func (b *bubble) connect(name string, r *bubbleReplica, qps float32) *kube.Client {
	t := b.t
	t.Helper()
	mn := &testutil.MemNet{}
	r.nets = append(r.nets, mn)
	ln, err := mn.Listen(name + ":80")
	require.NoError(t, err)
	h := b.srv.Handler()
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.dead.Load() {
			panic(http.ErrAbortHandler)
		}
		if f := r.refuse.Load(); f != nil && (*f)(req) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"refused by the test","reason":"InternalError","code":500}`))
			return
		}
		h.ServeHTTP(w, req)
	}), ErrorLog: log.New(io.Discard, "", 0)}
	served := make(chan struct{})
	go func() { _ = hs.Serve(ln); close(served) }()
	tr := mn.Transport()
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = hs.Close()
		<-served
	})
	kc, err := kube.NewClient(&kube.Config{Host: "http://" + name + ":80", HTTP: kube.HTTPConfig{Transport: tr}, RateLimit: kube.RateLimitConfig{QPS: qps}})
	require.NoError(t, err)
	return kc
}

// seed creates n ConfigMaps demo/cm-00 ... and returns their keys.
func (b *bubble) seed(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		name := fmt.Sprintf("cm-%02d", i)
		_, err := b.srv.Create("configmaps", fmt.Appendf(nil, `{"metadata":{"namespace":"demo","name":%q}}`, name))
		require.NoError(b.t, err)
		keys[i] = "demo/" + name
	}
	return keys
}

// seedAs creates n ConfigMaps in demo named by nameFormat (with extra(i),
// if set, appended to each object's fields) and returns their keys.
func (b *bubble) seedAs(n int, nameFormat string, extra func(i int) string) []string {
	keys := make([]string, n)
	for i := range keys {
		name, more := fmt.Sprintf(nameFormat, i), ""
		if extra != nil {
			more = extra(i)
		}
		_, err := b.srv.Create("configmaps", fmt.Appendf(nil, `{"metadata":{"namespace":"demo","name":%q}%s}`, name, more))
		require.NoError(b.t, err)
		keys[i] = "demo/" + name
	}
	return keys
}

// touch patches every key's ConfigMap once, in order.
func (b *bubble) touch(keys []string, field string) {
	for i, k := range keys {
		ns, name, _ := strings.Cut(k, "/")
		_, err := b.srv.Patch("configmaps", ns, name, fmt.Appendf(nil, `{"data":{%q:"%d"}}`, field, i))
		require.NoError(b.t, err)
	}
}

// churn patches the objects round robin, one every interval of fake
// time, until stopped (or the test ends), so reconciles run through
// every handover.
func (b *bubble) churn(keys []string, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tk.C:
			}
			ns, name, _ := strings.Cut(keys[i%len(keys)], "/")
			if _, err := b.srv.Patch("configmaps", ns, name, fmt.Appendf(nil, `{"data":{"n":"%d"}}`, i)); err != nil {
				b.t.Errorf("churn: %v", err)
				return
			}
		}
	}()
	stop = func() { cancel(); <-done }
	b.t.Cleanup(stop)
	return stop
}

// waitRing waits up to a minute of fake time until rs have settled on
// one ring that owns every key exactly once, and returns how long that
// took; on failure it logs each replica's view.
func (b *bubble) waitRing(rs []*bubbleReplica, keys []string) time.Duration {
	b.t.Helper()
	begin := time.Now()
	if !within(time.Minute, func() bool { return settledRing(rs) && ownedOnce(rs, keys) }) {
		for _, r := range rs {
			b.t.Logf("%s: %+v", r.id, r.mgr.Shard().Status())
		}
		b.t.Fatalf("the ring of %d replicas did not settle", len(rs))
	}
	return time.Since(begin)
}

// ownedOnce reports whether every key is owned by exactly one replica,
// the one the first replica's ring names.
func ownedOnce(rs []*bubbleReplica, keys []string) bool {
	ring := rs[0].mgr.Shard().Ring()
	for _, k := range keys {
		n := 0
		for _, r := range rs {
			if r.owns(k) {
				if r.id != ring.Owner(k) {
					return false
				}
				n++
			}
		}
		if n != 1 {
			return false
		}
	}
	return true
}

// shardLabels returns each ConfigMap's shard label, by key.
func (b *bubble) shardLabels() map[string]string {
	_, objs, err := b.srv.Snapshot("configmaps")
	require.NoError(b.t, err)
	out := map[string]string{}
	for _, o := range objs {
		var cm Obj
		require.NoError(b.t, json.Unmarshal(o.JSON, &cm))
		out[o.Namespace+"/"+o.Name] = cm.Labels[shard.LabelKey("cms")]
	}
	return out
}

// settledRing reports whether rs all see one another and have passed
// the barrier of their ring.
func settledRing(rs []*bubbleReplica) bool {
	for _, r := range rs {
		st := r.mgr.Shard().Status()
		if len(st.Members) != len(rs) || st.Settled == "" || st.Settled != st.Target {
			return false
		}
	}
	return true
}

// within polls cond every 100 ms of fake time for up to d, and reports
// whether it held.
func within(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); !cond(); {
		if !time.Now().Before(end) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

// labelledForOwners reports whether every key in keys carries the label
// of its owner under rs[0]'s ring.
func (b *bubble) labelledForOwners(rs []*bubbleReplica, keys []string) bool {
	ring, got := rs[0].mgr.Shard().Ring(), b.shardLabels()
	for _, k := range keys {
		if got[k] != ring.Owner(k) {
			return false
		}
	}
	return true
}

// ownerOfSecret makes sure the ConfigMap key names exists and creates a
// Secret owned by it (named s-<name>, in its namespace); it returns the
// Secret's key.
func (b *bubble) ownerOfSecret(key string) string {
	ns, name, _ := strings.Cut(key, "/")
	cm, err := b.srv.Get("configmaps", ns, name)
	if err != nil {
		cm, err = b.srv.Create("configmaps", fmt.Appendf(nil, `{"metadata":{"namespace":%q,"name":%q}}`, ns, name))
	}
	require.NoError(b.t, err)
	_, err = b.srv.Create("secrets", fmt.Appendf(nil, `{"metadata":{"namespace":%q,"name":"s-%s","ownerReferences":[`+
		`{"apiVersion":"v1","kind":"ConfigMap","name":%q,"uid":%q,"controller":true}]}}`, ns, name, name, cm.UID))
	require.NoError(b.t, err)
	return ns + "/s-" + name
}
