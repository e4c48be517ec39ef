package controller_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/metrics/metricstest"
	"github.com/kwatch/kwatch/shard"
)

// replica is one sharded manager of a test, reaching the server through
// a proxy of its own that can be cut, as a crashed process's connections
// are.
type replica struct {
	id     string
	mgr    *controller.Manager
	proxy  *httptest.Server
	dead   atomic.Bool
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// stop cancels the replica and returns Run's error (once; later calls
// return the same).
func (r *replica) stop() error {
	r.once.Do(func() {
		r.cancel()
		r.err = <-r.done
	})
	return r.err
}

// crash cuts the replica off the server (its requests fail, its
// connections close), then stops it: its Lease is never released, as
// after kill -9.
func (r *replica) crash() {
	r.dead.Store(true)
	r.proxy.CloseClientConnections()
	_ = r.stop()
}

func (r *replica) owns(key string) bool { return r.mgr.Shard().Owns(key) }

// shardTestConfig is a short ring for tests: 5 s lease, 4 s renew
// deadline, 250 ms retry. The renew deadline is long for a test because
// four managers, a churn of writes and the race detector share two
// loaded cores: a round can take most of a second, and a replica that
// cannot renew in time fences itself (correctly, but the test then
// measures the machine).
func shardTestConfig(id string) *shard.Config {
	return &shard.Config{Namespace: "demo", Ring: "cms", Identity: id,
		LeaseDuration: 5 * time.Second, RenewDeadline: 4 * time.Second, RetryPeriod: 250 * time.Millisecond}
}

func startReplica(t *testing.T, srv *kwatchtest.Server, id string, rec *overlapRecorder, adjust ...func(*shard.Config)) *replica {
	t.Helper()
	return startReplicaWith(t, srv, id, controller.Scope{}, func(c *kube.Client) controller.Reconciler {
		cms := client.For[*Obj](c, kube.ConfigMaps, client.Options{})
		return func(ctx context.Context, key controller.Key) (controller.Result, error) {
			rec.start(id, key.String())
			defer rec.end(id, key.String())
			_, err := cms.Get(ctx, key.Namespace, key.Name, client.GetOptions{}) // a round trip of work
			if kube.IsNotFound(err) {
				err = nil
			}
			return controller.Result{}, err
		}
	}, adjust...)
}

// startReplicaWith starts a replica whose ConfigMap controller (owning
// Secrets, For in forScope) reconciles with the reconciler made for the
// replica's client.
func startReplicaWith(t *testing.T, srv *kwatchtest.Server, id string, forScope controller.Scope,
	reconciler func(*kube.Client) controller.Reconciler, adjust ...func(*shard.Config)) *replica {
	t.Helper()
	target, err := url.Parse(srv.URL())
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	rp.ErrorLog = log.New(io.Discard, "", 0)
	r := &replica{id: id, done: make(chan error, 1)}
	r.proxy = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.dead.Load() {
			panic(http.ErrAbortHandler)
		}
		rp.ServeHTTP(w, req)
	}))
	t.Cleanup(r.proxy.Close)
	c, err := kube.NewClient(&kube.Config{Host: r.proxy.URL, QPS: -1})
	require.NoError(t, err)
	// The ring gets a client of its own: renews must not queue behind
	// the reconciles' requests in one token bucket.
	sc, err := kube.NewClient(&kube.Config{Host: r.proxy.URL})
	require.NoError(t, err)
	cfg := shardTestConfig(id)
	cfg.Client = sc
	for _, f := range adjust {
		f(cfg)
	}
	r.mgr, err = controller.NewManager(c, controller.ManagerOptions{Namespace: "demo", Logger: quiet(),
		ShutdownTimeout: 500 * time.Millisecond, Sharding: cfg})
	require.NoError(t, err)
	_, err = controller.New(r.mgr, controller.Config[*Obj]{Name: "cms", For: kube.ConfigMaps, ForScope: forScope, Workers: 4,
		Owns:      []controller.Source{controller.Owns[*Obj](kube.Secrets)},
		Reconcile: reconciler(c)})
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

// ownedOnce reports whether every key is owned by exactly one replica,
// the one the first replica's ring names.
func ownedOnce(rs []*replica, keys []string) bool {
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

// waitRing waits until rs have settled on one ring that owns every key
// exactly once; on failure it logs each replica's view.
func waitRing(t *testing.T, rs []*replica, keys []string) {
	t.Helper()
	ok := assertEventually(func() bool { return ringSettled(rs) && ownedOnce(rs, keys) })
	if !ok {
		for _, r := range rs {
			t.Logf("%s: %+v", r.id, r.mgr.Shard().Status())
		}
		t.Fatalf("the ring of %d replicas did not settle", len(rs))
	}
}

// assertEventually polls cond every 50 ms for up to waitLong.
func assertEventually(cond func() bool) bool {
	deadline := time.Now().Add(waitLong)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}

func ringSettled(rs []*replica) bool {
	for _, r := range rs {
		st := r.mgr.Shard().Status()
		if len(st.Members) != len(rs) || st.Settled != st.Target {
			return false
		}
	}
	return true
}

// reconciledSince reports whether every key's last reconcile started
// after since, on the replica its ring names.
func reconciledSince(rec *overlapRecorder, rs []*replica, keys []string, since time.Time) bool {
	ring := rs[0].mgr.Shard().Ring()
	for _, k := range keys {
		last, ok := rec.lastOf(k)
		if !ok || last.at.Before(since) || last.replica != ring.Owner(k) {
			return false
		}
	}
	return true
}

// churn patches the objects round robin, one every 5 ms, until stopped,
// so reconciles run through every handover.
func churn(t *testing.T, srv *kwatchtest.Server, keys []string) func() {
	return churnEvery(t, srv, keys, 5*time.Millisecond)
}

// churnEvery is churn with one patch every interval.
func churnEvery(t *testing.T, srv *kwatchtest.Server, keys []string, interval time.Duration) func() {
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
			k := controller.ParseKey(keys[i%len(keys)])
			_, err := srv.Patch("configmaps", k.Namespace, k.Name, fmt.Sprintf(`{"data":{"n":"%d"}}`, i))
			if err != nil {
				t.Errorf("churn: %v", err)
				return
			}
		}
	}()
	stop := func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// seedConfigMaps creates n ConfigMaps in demo named by nameFormat (with
// extra(i), if set, appended to each object's fields) and returns their
// keys.
func seedConfigMaps(t *testing.T, srv *kwatchtest.Server, n int, nameFormat string, extra func(i int) string) []string {
	t.Helper()
	keys := make([]string, 0, n)
	for i := range n {
		name := fmt.Sprintf(nameFormat, i)
		more := ""
		if extra != nil {
			more = extra(i)
		}
		_, err := srv.Create("configmaps", fmt.Sprintf(`{"metadata":{"namespace":"demo","name":%q}%s}`, name, more))
		require.NoError(t, err)
		keys = append(keys, "demo/"+name)
	}
	return keys
}

// TestShardedManagers: three sharded managers on one server split 1,000
// ConfigMaps; a fourth joins and takes about a quarter; one crashes and
// its keys are owned and reconciled again by the others. Objects change
// all along, and no key is ever reconciled by two replicas at once.
func TestShardedManagers(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	keys := seedConfigMaps(t, srv, 1000, "cm-%04d", nil)
	rec := newOverlapRecorder()
	var rs []*replica
	for i := range 3 {
		rs = append(rs, startReplica(t, srv, fmt.Sprintf("replica-%d", i), rec))
	}
	begin := time.Now()
	waitRing(t, rs, keys)
	require.Eventually(t, func() bool { return reconciledSince(rec, rs, keys, begin) }, waitLong, 50*time.Millisecond,
		"every key reconciled by its owner")
	t.Logf("3 replicas settled and reconciled every key in %v", time.Since(begin))
	stopChurn := churn(t, srv, keys)
	defer stopChurn()

	// A fourth replica joins: about a quarter of the keys move to it.
	before := rs[0].mgr.Shard().Ring()
	joined := time.Now()
	rs = append(rs, startReplica(t, srv, "replica-3", rec))
	waitRing(t, rs, keys)
	t.Logf("handover to a 4th replica settled in %v", time.Since(joined))
	after := rs[0].mgr.Shard().Ring()
	moved := 0
	for _, k := range keys {
		if o := after.Owner(k); o != before.Owner(k) {
			require.Equal(t, "replica-3", o)
			moved++
		}
	}
	require.InDelta(t, 250, moved, 100, "keys moved to the 4th replica")

	// One replica crashes: its keys move once its Lease expires.
	crashed := time.Now()
	rs[1].crash()
	live := []*replica{rs[0], rs[2], rs[3]}
	waitRing(t, live, keys)
	t.Logf("keys of the crashed replica owned again %v after the crash (lease 5 s)", time.Since(crashed))
	stopChurn()

	touched := time.Now()
	for i, k := range keys {
		key := controller.ParseKey(k)
		_, err := srv.Patch("configmaps", key.Namespace, key.Name, fmt.Sprintf(`{"data":{"touched":"%d"}}`, i))
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return reconciledSince(rec, live, keys, touched) }, waitLong, 50*time.Millisecond,
		"every key reconciled by its owner once the ring settled")
	require.Empty(t, rec.overlapList())
	t.Logf("%d reconciles, 0 overlaps", rec.count())
}

// TestShardedOwnedObjectsFollowTheirOwner: a change of an owned Secret
// enqueues its owner ConfigMap's key on every replica, and only the
// owner's replica on the ring reconciles it.
func TestShardedOwnedObjectsFollowTheirOwner(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	var keys []string
	for i := range 60 {
		name := fmt.Sprintf("cm-%02d", i)
		cm, err := srv.Create("configmaps", fmt.Sprintf(`{"metadata":{"namespace":"demo","name":%q}}`, name))
		require.NoError(t, err)
		_, err = srv.Create("secrets", fmt.Sprintf(`{"metadata":{"namespace":"demo","name":"s-%s","ownerReferences":[`+
			`{"apiVersion":"v1","kind":"ConfigMap","name":%q,"uid":%q,"controller":true}]}}`, name, name, cm.UID))
		require.NoError(t, err)
		keys = append(keys, "demo/"+name)
	}
	rec := newOverlapRecorder()
	rs := []*replica{startReplica(t, srv, "replica-0", rec), startReplica(t, srv, "replica-1", rec)}
	waitRing(t, rs, keys)
	require.Eventually(t, func() bool { return reconciledSince(rec, rs, keys, time.Time{}) }, waitLong, 50*time.Millisecond)
	touched := time.Now()
	for i, k := range keys {
		key := controller.ParseKey(k)
		_, err := srv.Patch("secrets", "demo", "s-"+key.Name, fmt.Sprintf(`{"metadata":{"annotations":{"n":"%d"}}}`, i))
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return reconciledSince(rec, rs, keys, touched) }, waitLong, 50*time.Millisecond,
		"every owner reconciled after its Secret changed, by its replica")
	require.Empty(t, rec.overlapList())
}

// TestShardMetrics: each replica's kwatch_shard_keys_owned is the number
// of keys it owns, and its ring metrics see both members.
func TestShardMetrics(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	keys := seedConfigMaps(t, srv, 100, "cm-%03d", nil)
	rec := newOverlapRecorder()
	regs := []*metrics.Registry{metrics.NewRegistry(), metrics.NewRegistry()}
	var rs []*replica
	for i, reg := range regs {
		rs = append(rs, startReplica(t, srv, fmt.Sprintf("replica-%d", i), rec, func(c *shard.Config) { c.Metrics = reg }))
	}
	waitRing(t, rs, keys)
	total := 0.0
	for i, reg := range regs {
		m := metricstest.Scrape(t, reg)
		owned := m[`kwatch_shard_keys_owned{name="cms"}`]
		want := 0
		for _, k := range keys {
			if rs[i].owns(k) {
				want++
			}
		}
		require.Equal(t, float64(want), owned, "replica-%d", i)
		require.Equal(t, 2.0, m[`kwatch_shard_ring_members{ring="demo/cms"}`])
		require.GreaterOrEqual(t, m[`kwatch_shard_handovers_total{ring="demo/cms"}`], 1.0)
		total += owned
	}
	require.Equal(t, float64(len(keys)), total)
}
