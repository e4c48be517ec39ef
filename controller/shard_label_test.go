package controller_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/controller"
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
	var keys []string
	for i := range 300 {
		name := fmt.Sprintf("cm-%03d", i)
		_, err := srv.Create("configmaps", fmt.Sprintf(`{"metadata":{"namespace":"demo","name":%q}}`, name))
		require.NoError(t, err)
		keys = append(keys, "demo/"+name)
	}
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
