package controller_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/shard"
)

var demoOnly = controller.ManagerOptions{Namespace: "demo"}

// listOfOthers matches a Label-mode replica's list of the ConfigMaps
// labelled for other members (its selector has "key!=me"; the
// informers' have "key=me" and "!key").
func listOfOthers(req *http.Request) bool {
	q := req.URL.Query()
	return req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/configmaps") &&
		q.Get("watch") == "" && strings.Contains(q.Get("labelSelector"), "!=")
}

// TestLabelModeRingThatComesBackRelabels: x and y share the ConfigMaps;
// z joins, takes its share (some of it from x) and leaves again, so the
// ring is {x,y} again, with the version it had before. While z lived,
// x's list of the objects labelled for others failed. Once z has left
// and x's lists work again, x must still find the objects labelled for
// z that it owns again, relabel them and reconcile them: the settle
// after a change of view lists, even when the ring's version is one it
// listed before. Default ring timings.
func TestLabelModeRingThatComesBackRelabels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t)
		keys := b.seed(60)
		x := b.start("x", kube.Scope{}, demoOnly)
		y := b.start("y", kube.Scope{}, demoOnly)
		xy := []*bubbleReplica{x, y}
		require.True(t, within(time.Minute, func() bool { return settledRing(xy) && b.labelledForOwners(xy, keys) }),
			"x and y label their objects")
		before := x.mgr.Shard().Status().Settled

		x.refuseWhile(listOfOthers)
		z := b.start("z", kube.Scope{}, demoOnly)
		xyz := []*bubbleReplica{x, y, z}
		require.True(t, within(time.Minute, func() bool { return settledRing(xyz) && b.labelledForOwners(xyz, keys) }),
			"z labels its share")
		ringXY := shard.NewRing([]string{"x", "y"}, 0)
		var back []string // labelled for z, x's again once z leaves
		for k, l := range b.shardLabels() {
			if l == "z" && ringXY.Owner(k) == "x" {
				back = append(back, k)
			}
		}
		require.NotEmpty(t, back, "z took keys from x")

		require.NoError(t, z.stop())
		left := time.Now()
		require.True(t, within(time.Minute, func() bool { return settledRing(xy) }), "x and y settle without z")
		require.Equal(t, before, x.mgr.Shard().Status().Settled, "the ring is the one before z joined")
		x.refuseWhile(nil)

		require.True(t, within(2*time.Minute, func() bool { return b.labelledForOwners(xy, keys) }),
			"x relabels the objects it owns again: still labelled %v", stillFor(b, back, "z"))
		require.True(t, within(time.Minute, func() bool { return reconciledBy(b.rec, ringXY, back, left) }),
			"and reconciles them")
		require.Empty(t, b.rec.overlapList())
	})
}

// stillFor lists the keys among keys whose shard label is id.
func stillFor(b *bubble, keys []string, id string) []string {
	got := b.shardLabels()
	var out []string
	for _, k := range keys {
		if got[k] == id {
			out = append(out, k)
		}
	}
	return out
}

// reconciledBy reports whether each key's last reconcile started after
// since, on its owner under ring.
func reconciledBy(rec *overlapRecorder, ring *shard.Ring, keys []string, since time.Time) bool {
	for _, k := range keys {
		last, ok := rec.lastOf(k)
		if !ok || last.at.Before(since) || last.replica != ring.Owner(k) {
			return false
		}
	}
	return true
}

// TestLabelModeOwnerOutsideScopeIsReconciledNotLabelled: a Secret is
// owned by a ConfigMap outside the controller's ForScope, by its field
// selector or by its namespace. Its owner's key comes from Owns: it is
// reconciled as in Filter mode (read live, not cached) and never gets
// the shard label, which its replica's scoped informers would never
// show it by.
func TestLabelModeOwnerOutsideScopeIsReconciledNotLabelled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		scope   kube.Scope
		mgr     controller.ManagerOptions
		outside string // the owner outside the scope, namespace/name
	}{
		{name: "field selector", scope: kube.Scope{FieldSelector: "metadata.name!=cm-05"}, mgr: demoOnly,
			outside: "demo/cm-05"},
		{name: "field selector on the namespace", scope: kube.Scope{FieldSelector: "metadata.namespace=demo"},
			outside: "other/cm-x"},
		{name: "namespace", scope: kube.Scope{Namespace: "demo"}, outside: "other/cm-x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBubble(t)
				require.NoError(t, b.srv.EnsureNamespace("other"))
				keys := b.seed(20)
				owner := b.ownerOfSecret(tc.outside)
				inScope := slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return k == tc.outside })
				x, y := b.start("x", tc.scope, tc.mgr), b.start("y", tc.scope, tc.mgr)
				xy := []*bubbleReplica{x, y}
				require.True(t, within(time.Minute, func() bool { return settledRing(xy) && b.labelledForOwners(xy, inScope) }),
					"the objects in scope are labelled for their owners")
				require.True(t, within(time.Minute, func() bool { return reconciledBy(b.rec, x.mgr.Shard().Ring(), inScope, time.Time{}) }))

				touched := time.Now()
				ns, name, _ := strings.Cut(owner, "/")
				_, err := b.srv.Patch("secrets", ns, name, []byte(`{"metadata":{"annotations":{"touched":"1"}}}`))
				require.NoError(t, err)
				require.True(t, within(time.Minute, func() bool {
					return reconciledBy(b.rec, x.mgr.Shard().Ring(), []string{tc.outside}, touched)
				}), "the owner outside the scope is reconciled, as in Filter mode")
				require.Empty(t, b.shardLabels()[tc.outside], "and never labelled")
				require.Empty(t, b.rec.overlapList())
			})
		})
	}
}
