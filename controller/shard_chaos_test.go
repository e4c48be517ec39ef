package controller_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
)

// writeBackReplica is a sharded replica whose reconcile copies the
// ConfigMap's data "v" into its annotation "seen" with a patch.
func writeBackReplica(t *testing.T, srv *kwatchtest.Server, id string, rec *overlapRecorder) *replica {
	t.Helper()
	r := startReplicaWith(t, srv, id, controller.Scope{}, func(c *kube.Client) controller.Reconciler {
		cms := client.For[*Obj](c, kube.ConfigMaps, client.Options{})
		return func(ctx context.Context, key controller.Key) (controller.Result, error) {
			rec.start(id, key.String())
			defer rec.end(id, key.String())
			obj, err := cms.Get(ctx, key.Namespace, key.Name, client.GetOptions{})
			if kube.IsNotFound(err) {
				return controller.Result{}, nil
			}
			if err != nil {
				return controller.Result{}, err
			}
			if obj.Annotations["seen"] == obj.Data["v"] {
				return controller.Result{}, nil
			}
			patch := fmt.Sprintf(`{"metadata":{"annotations":{"seen":%q}}}`, obj.Data["v"])
			_, err = cms.Patch(ctx, key.Namespace, key.Name, client.MergePatch, []byte(patch), client.PatchOptions{})
			return controller.Result{}, err
		}
	})
	return r
}

// TestShardedWriteBackUnderFaults: three replicas that write back, a
// writer changing the objects, and faults all along (watches cut, writes
// and Lease requests answered 500, a replica crashing, one joining):
// after the faults settle, every object's last change was written back
// (no lost update), no key was reconciled by two replicas at once, and
// every key is owned once.
func TestShardedWriteBackUnderFaults(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	keys := seedConfigMaps(t, srv, 200, "cm-%03d", func(int) string { return `,"data":{"v":"0"}` })
	rec := newOverlapRecorder()
	var rs []*replica
	for i := range 3 {
		rs = append(rs, writeBackReplica(t, srv, fmt.Sprintf("replica-%d", i), rec))
	}
	waitRing(t, rs, keys)

	rng := rand.New(rand.NewPCG(7, 7))
	last := map[string]int{}
	write := func(n int) {
		for range n {
			k := keys[rng.IntN(len(keys))]
			last[k]++
			key := controller.ParseKey(k)
			_, err := srv.Patch("configmaps", key.Namespace, key.Name, fmt.Sprintf(`{"data":{"v":"%d"}}`, last[k]))
			require.NoError(t, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	write(200)
	cut := srv.CutWatch(kwatchtest.FaultOptions{Resource: "configmaps", Count: 2, AfterEvents: 5})
	srv.Restart(false) // every open watch ends; the new ones take the cuts
	write(200)
	require.NoError(t, cut.WaitN(ctx, 2))
	errs := srv.Error(500, 0, kwatchtest.FaultOptions{Resource: "configmaps", Match: "write", Count: 20})
	write(200)
	require.NoError(t, errs.WaitN(ctx, 20))
	leaseErrs := srv.Error(500, 0, kwatchtest.FaultOptions{Resource: "leases.coordination.k8s.io", Count: 3})
	rs[0].crash()
	write(200)
	rs = append(rs[1:], writeBackReplica(t, srv, "replica-3", rec))
	write(200)
	require.NoError(t, leaseErrs.WaitN(ctx, 3))
	srv.ClearFaults()

	waitRing(t, rs, keys)
	lost := func() []string {
		var out []string
		objs, err := srv.List("configmaps", "demo")
		require.NoError(t, err)
		for _, o := range objs {
			var cm Obj
			require.NoError(t, o.Into(&cm))
			if want := fmt.Sprint(last["demo/"+o.Name]); cm.Annotations["seen"] != want || cm.Data["v"] != want {
				out = append(out, fmt.Sprintf("%s: v=%s seen=%s want %s", o.Name, cm.Data["v"], cm.Annotations["seen"], want))
			}
		}
		return out
	}
	if !assertEventually(func() bool { return len(lost()) == 0 }) {
		t.Fatalf("lost updates: %v", lost())
	}
	require.Empty(t, rec.overlapList())
	t.Logf("%d reconciles, 0 overlaps, 0 lost updates", rec.count())
}
