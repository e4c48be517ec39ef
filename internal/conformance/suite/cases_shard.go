package suite

import (
	"fmt"
	"slices"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/internal/rig/shardreplica"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/shard"
	"github.com/kwatch/kwatch/watch"
)

// The shard case runs its replicas as processes of this binary.
func init() { shardreplica.MaybeRun() }

// shardCases split a controller's keys across replica processes
// (package shard).
func shardCases() []Case {
	return []Case{
		{Name: "shard/replicas-split-configmaps-without-overlap", Run: func(t T, e *Env) { testShardReplicas(t, e, shard.Filter) }},
		{Name: "shard/label-mode-replicas-relabel-without-overlap", Run: func(t T, e *Env) { testShardReplicas(t, e, shard.Label) }},
	}
}

// shardTiming is the ring's timing: as short as the leader case's.
var shardTiming = shardreplica.Timing{Lease: 4 * time.Second, Renew: 3 * time.Second, Retry: 500 * time.Millisecond}

// shardStep bounds each wait: a lease duration plus a few retry periods,
// with slack for a loaded machine.
const shardStep = 60 * time.Second

type shardCM struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Data              map[string]string `json:"data,omitempty"`
}

// testShardReplicas: three replica processes split 300 ConfigMaps; a
// fourth joins; one is killed with SIGKILL and the others take its keys
// once its Lease expires. After each change, every ConfigMap is changed
// and must be reconciled by its owner on the ring; the replicas'
// printed timelines must never show one ConfigMap reconciled by two
// replicas at overlapping times.
//
// In Label mode the replicas also label the ConfigMaps for their owners
// and watch only their own and the unlabelled ones; after each change
// every ConfigMap must carry its owner's label.
func testShardReplicas(t T, e *Env, mode shard.Mode) {
	cfg := e.Target.Config(Admin)
	cms := client.For(e.Admin, kube.Typed[*shardCM](kube.ConfigMaps), client.Options{})
	var keys []string
	for i := range 300 {
		obj := &shardCM{ObjectMeta: metav1.ObjectMeta{Namespace: e.NS, Name: fmt.Sprintf("shard-%03d", i)}}
		if _, err := cms.Create(e.Ctx, obj, client.CreateOptions{}); err != nil {
			t.Errorf("create %s: %v", obj.Name, err)
			t.FailNow()
		}
		keys = append(keys, e.NS+"/"+obj.Name)
	}
	all, err := cms.List(e.Ctx, kube.Scope{Namespace: e.NS}, watch.ListOptions{})
	if err != nil {
		t.Errorf("list: %v", err)
		t.FailNow()
	}
	keys = keys[:0]
	for _, o := range all.Items { // every ConfigMap of the namespace is the controller's
		keys = append(keys, e.NS+"/"+o.Name)
	}
	tl := shardreplica.NewTimeline()
	procs := map[string]*shardreplica.Proc{}
	start := func(id string) {
		p, err := shardreplica.StartProc(shardreplica.Options{Config: cfg, NS: e.NS, Ring: "conformance",
			ID: id, Timing: shardTiming, Mode: mode}, tl, func(line string) { t.Logf("replica %s", line) })
		if err != nil {
			t.Errorf("start replica %s: %v", id, err)
			t.FailNow()
		}
		procs[id] = p
		t.Cleanup(p.Kill)
	}
	ids := []string{"replica-0", "replica-1", "replica-2"}
	for _, id := range ids {
		start(id)
	}
	shardSettle(t, e, tl, ids)
	shardTouch(t, e, cms, tl, keys, ids)
	shardLabels(t, e, cms, mode, ids)

	start("replica-3")
	ids = append(ids, "replica-3")
	shardSettle(t, e, tl, ids)
	counts := shardTouch(t, e, cms, tl, keys, ids)
	t.Logf("keys per replica after the 4th joined: %v", counts)
	shardLabels(t, e, cms, mode, ids)

	killed := procs["replica-1"].Signal(syscall.SIGKILL)
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == "replica-1" })
	shardSettle(t, e, tl, ids)
	t.Logf("after kill -9 of a replica the others settled on a ring of %d within %v (lease %v)",
		len(ids), time.Since(killed).Round(time.Millisecond), shardTiming.Lease)
	shardTouch(t, e, cms, tl, keys, ids)
	shardLabels(t, e, cms, mode, ids)
	for _, id := range ids {
		procs[id].Signal(syscall.SIGTERM)
	}
	for _, o := range tl.Overlaps() {
		t.Errorf("overlapping reconciles: %s", o)
	}
	t.Logf("%d reconciles of %d ConfigMaps, %d overlaps", tl.Total(), len(keys), len(tl.Overlaps()))
}

// shardSettle waits until every replica of ids prints the ring of ids,
// settled.
func shardSettle(t T, e *Env, tl *shardreplica.Timeline, ids []string) {
	t.Helper()
	want := slices.Sorted(slices.Values(ids))
	eventually(t, e, shardStep, fmt.Sprintf("the ring of %v settles", ids), func() bool {
		for _, id := range ids {
			v := tl.Ring(id)
			if !v.Settled || !slices.Equal(v.Members, want) {
				return false
			}
		}
		return true
	})
}

// shardTouch changes every ConfigMap and waits until each was reconciled
// since, then checks the last reconcile of each was by its ring owner.
// It returns how many keys each replica reconciled.
func shardTouch(t T, e *Env, cms *client.Client[*shardCM], tl *shardreplica.Timeline, keys, ids []string) map[string]int {
	t.Helper()
	ring := shard.NewRing(ids, 0)
	touched := time.Now()
	for i, k := range keys {
		name := k[len(e.NS)+1:]
		patch := fmt.Sprintf(`{"data":{"touched":"%d-%d"}}`, touched.UnixNano(), i)
		if _, err := cms.Patch(e.Ctx, e.NS, name, client.MergePatch, []byte(patch), client.PatchOptions{}); err != nil {
			t.Errorf("touch %s: %v", k, err)
			t.FailNow()
		}
	}
	counts := map[string]int{}
	eventually(t, e, shardStep, "every ConfigMap reconciled after the touch", func() bool {
		clear(counts)
		for _, k := range keys {
			s, ok := tl.FirstAfter(k, touched, "")
			if !ok {
				return false
			}
			counts[s.Replica]++
		}
		return true
	})
	for _, k := range keys {
		if got, want := tl.LastBefore(k, time.Now()), ring.Owner(k); got != want {
			t.Errorf("%s last reconciled by %q; its owner on the ring is %q", k, got, want)
		}
	}
	return counts
}

// shardLabels checks, in Label mode, that every ConfigMap carries the
// label of its owner on the ring of ids (once reconciled, it must).
func shardLabels(t T, e *Env, cms *client.Client[*shardCM], mode shard.Mode, ids []string) {
	t.Helper()
	if mode != shard.Label {
		return
	}
	ring := shard.NewRing(ids, 0)
	page, err := cms.List(e.Ctx, kube.Scope{Namespace: e.NS}, watch.ListOptions{})
	if err != nil {
		t.Errorf("list: %v", err)
		t.FailNow()
	}
	wrong := 0
	for _, o := range page.Items {
		if got, want := o.Labels[shard.LabelKey("conformance")], ring.Owner(e.NS+"/"+o.Name); got != want {
			if wrong++; wrong <= 5 {
				t.Errorf("%s labelled %q; its owner is %q", o.Name, got, want)
			}
		}
	}
}
