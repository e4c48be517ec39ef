package controller_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/shard"
)

// TestShardedLabelMode: in Label mode three replicas label the 300
// ConfigMaps for their owners and reconcile them; a fourth joins and the
// objects it gains are relabelled; one crashes and its objects are
// relabelled by the new owners. No key is reconciled twice at once, and
// every key is reconciled by its owner at the end. Default ring
// timings, fake time.
func TestShardedLabelMode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t)
		keys := b.seedAs(300, "cm-%03d", nil)
		start := func(id string) *bubbleReplica {
			return b.startWith(id, replicaSpec{mode: shard.Label, mgr: demoOnly, reconcile: b.getRoundTrip})
		}
		var rs []*bubbleReplica
		for i := range 3 {
			rs = append(rs, start(fmt.Sprintf("replica-%d", i)))
		}
		b.waitRing(rs, keys)
		require.True(t, within(time.Minute, func() bool { return b.labelledForOwners(rs, keys) }), "objects labelled for their owners")
		require.True(t, within(time.Minute, func() bool { return b.rec.reconciledAfter(rs[0].mgr.Shard().Ring(), keys, 0) }))

		rs = append(rs, start("replica-3"))
		b.waitRing(rs, keys)
		require.True(t, within(time.Minute, func() bool { return b.labelledForOwners(rs, keys) }), "relabelled after a join")

		rs[1].crash()
		live := []*bubbleReplica{rs[0], rs[2], rs[3]}
		b.waitRing(live, keys)
		require.True(t, within(time.Minute, func() bool { return b.labelledForOwners(live, keys) }), "relabelled after a crash")

		mark := b.rec.mark()
		b.touch(keys, "touched")
		require.True(t, within(time.Minute, func() bool { return b.rec.reconciledAfter(live[0].mgr.Shard().Ring(), keys, mark) }),
			"every key reconciled by its owner")
		require.Empty(t, b.rec.overlapList())
	})
}

// TestShardedLabelModeKeepsToItsScope: with a ForScope selector, only
// the controller's objects get the shard label, even when an object
// outside the scope is the owner of an owned Secret (its key comes from
// Owns); every key in scope is reconciled by its owner.
func TestShardedLabelModeKeepsToItsScope(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t)
		var mine, outside, secrets []string
		for i := range 40 {
			name, app := fmt.Sprintf("cm-%02d", i), "x"
			if i%2 == 1 {
				app = "y"
			}
			_, err := b.srv.Create("configmaps", fmt.Appendf(nil, `{"metadata":{"namespace":"demo","name":%q,"labels":{"app":%q}}}`, name, app))
			require.NoError(t, err)
			if app == "x" {
				mine = append(mine, "demo/"+name)
				continue
			}
			outside = append(outside, "demo/"+name)
			secrets = append(secrets, b.ownerOfSecret("demo/"+name))
		}
		var rs []*bubbleReplica
		for i := range 2 {
			rs = append(rs, b.start(fmt.Sprintf("replica-%d", i), kube.Scope{LabelSelector: "app=x"}, demoOnly))
		}
		b.waitRing(rs, mine)
		ring := rs[0].mgr.Shard().Ring()
		labelledRight := func() bool {
			_, objs, err := b.srv.Snapshot("configmaps")
			require.NoError(t, err)
			for _, o := range objs {
				var cm Obj
				require.NoError(t, json.Unmarshal(o.JSON, &cm))
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
		require.True(t, within(time.Minute, labelledRight), "in-scope objects labelled for their owners, the others not at all")
		require.True(t, within(time.Minute, func() bool { return b.rec.reconciledAfter(ring, mine, 0) }))
		for _, s := range secrets { // an owned Secret changes: its out-of-scope owner's key is enqueued
			ns, name, _ := strings.Cut(s, "/")
			_, err := b.srv.Patch("secrets", ns, name, []byte(`{"metadata":{"annotations":{"touched":"1"}}}`))
			require.NoError(t, err)
		}
		require.True(t, within(time.Minute, func() bool { return b.rec.reconciledAfter(ring, outside, 0) }),
			"out-of-scope owners reconciled, as in Filter mode")
		require.True(t, labelledRight(), "and never labelled")
		require.Empty(t, b.rec.overlapList())
	})
}
