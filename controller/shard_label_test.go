package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/shard"
)

func labelModeConfig(c *shard.Config) { c.Mode = shard.Label }

// labelsSettled reports whether every ConfigMap carries the label of its
// owner on the ring of rs.
func labelsSettled(t *testing.T, srv *kwatchtest.Server, rs []*replica, n int) bool {
	objs, err := srv.List("configmaps", "demo")
	require.NoError(t, err)
	if len(objs) != n {
		return false
	}
	ring := rs[0].mgr.Shard().Ring()
	for _, o := range objs {
		var meta struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(o.JSON, &meta))
		if meta.Metadata.Labels[shard.LabelKey("cms")] != ring.Owner("demo/"+o.Name) {
			return false
		}
	}
	return true
}

// TestShardedLabelMode: in Label mode three replicas label the 300
// ConfigMaps for their owners and reconcile them; a fourth joins and the
// objects it gains are relabelled; one crashes and its objects are
// relabelled by the new owners. No key is reconciled twice at once, and
// every key is reconciled by its owner at the end.
func TestShardedLabelMode(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	keys := seedConfigMaps(t, srv, 300, "cm-%03d", nil)
	rec := newOverlapRecorder()
	var rs []*replica
	for i := range 3 {
		rs = append(rs, startReplica(t, srv, fmt.Sprintf("replica-%d", i), rec, labelModeConfig))
	}
	waitRing(t, rs, keys)
	require.True(t, assertEventually(func() bool { return labelsSettled(t, srv, rs, len(keys)) }), "objects labelled for their owners")
	require.True(t, assertEventually(func() bool { return reconciledSince(rec, rs, keys, time.Time{}) }))

	rs = append(rs, startReplica(t, srv, "replica-3", rec, labelModeConfig))
	waitRing(t, rs, keys)
	require.True(t, assertEventually(func() bool { return labelsSettled(t, srv, rs, len(keys)) }), "relabelled after a join")

	rs[1].crash()
	live := []*replica{rs[0], rs[2], rs[3]}
	waitRing(t, live, keys)
	require.True(t, assertEventually(func() bool { return labelsSettled(t, srv, live, len(keys)) }), "relabelled after a crash")

	touched := time.Now()
	for i, k := range keys {
		key := controller.ParseKey(k)
		_, err := srv.Patch("configmaps", key.Namespace, key.Name, fmt.Sprintf(`{"data":{"touched":"%d"}}`, i))
		require.NoError(t, err)
	}
	require.True(t, assertEventually(func() bool { return reconciledSince(rec, live, keys, touched) }),
		"every key reconciled by its owner")
	require.Empty(t, rec.overlapList())
}

// TestShardedLabelModeKeepsToItsScope: with a ForScope selector, only
// the controller's objects get the shard label, even when an object
// outside the scope is the owner of an owned Secret (its key comes from
// Owns); every key in scope is reconciled by its owner.
func TestShardedLabelModeKeepsToItsScope(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	var mine, outside []string
	for i := range 40 {
		name := fmt.Sprintf("cm-%02d", i)
		app := "x"
		if i%2 == 1 {
			app = "y"
		}
		cm, err := srv.Create("configmaps", fmt.Sprintf(`{"metadata":{"namespace":"demo","name":%q,"labels":{"app":%q}}}`, name, app))
		require.NoError(t, err)
		if app == "x" {
			mine = append(mine, "demo/"+name)
			continue
		}
		outside = append(outside, name)
		_, err = srv.Create("secrets", fmt.Sprintf(`{"metadata":{"namespace":"demo","name":"s-%s","ownerReferences":[`+
			`{"apiVersion":"v1","kind":"ConfigMap","name":%q,"uid":%q,"controller":true}]}}`, name, name, cm.UID))
		require.NoError(t, err)
	}
	rec := newOverlapRecorder()
	var rs []*replica
	for i := range 2 {
		id := fmt.Sprintf("replica-%d", i)
		rs = append(rs, startReplicaWith(t, srv, id, controller.Scope{LabelSelector: "app=x"},
			func(*kube.Client) controller.Reconciler {
				return func(ctx context.Context, key controller.Key) (controller.Result, error) {
					rec.start(id, key.String())
					rec.end(id, key.String())
					return controller.Result{}, nil
				}
			}, labelModeConfig))
	}
	waitRing(t, rs, mine)
	ring := rs[0].mgr.Shard().Ring()
	labelledRight := func() bool {
		objs, err := srv.List("configmaps", "demo")
		require.NoError(t, err)
		for _, o := range objs {
			var cm Obj
			require.NoError(t, o.Into(&cm))
			want := ring.Owner("demo/" + o.Name)
			if cm.Labels["app"] == "y" {
				want = ""
			}
			if cm.Labels[shard.LabelKey("cms")] != want {
				return false
			}
		}
		return true
	}
	require.True(t, assertEventually(labelledRight), "in-scope objects labelled for their owners, the others not at all")
	require.True(t, assertEventually(func() bool { return reconciledSince(rec, rs, mine, time.Time{}) }))
	for _, name := range outside { // an owned Secret changes: its out-of-scope owner's key is enqueued
		_, err := srv.Patch("secrets", "demo", "s-"+name, `{"metadata":{"annotations":{"touched":"1"}}}`)
		require.NoError(t, err)
	}
	require.True(t, assertEventually(func() bool { return reconciledSince(rec, rs, prefixed(outside), time.Time{}) }),
		"out-of-scope owners reconciled, as in Filter mode")
	require.True(t, labelledRight(), "and never labelled")
	require.Empty(t, rec.overlapList())
}

func prefixed(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "demo/" + n
	}
	return out
}
