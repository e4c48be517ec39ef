package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/kube"
)

// writeBack makes a reconciler that copies the ConfigMap's data "v" into
// its annotation "seen" with a patch.
func (b *bubble) writeBack(id string, c *kube.Client) controller.Reconciler {
	cms := client.For(c, kube.Typed[*Obj](kube.ConfigMaps), client.Options{})
	return func(ctx context.Context, key controller.Key) (controller.Result, error) {
		b.rec.start(id, key.String())
		defer b.rec.end(id, key.String())
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
}

// inject gives the server a fault and fails the test if it cannot.
func (b *bubble) inject(f sim.Fault) *sim.InjectedFault {
	b.t.Helper()
	in, err := b.srv.InjectFaultTracked(f)
	require.NoError(b.t, err)
	return in
}

// TestShardedWriteBackUnderFaults: three replicas that write back, a
// writer changing the objects, and faults all along (watches cut, writes
// and Lease requests answered 500, a replica crashing, one joining):
// after the faults settle, every object's last change was written back
// (no lost update), no key was reconciled by two replicas at once, and
// every key is owned once. Default ring timings, fake time.
func TestShardedWriteBackUnderFaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t)
		keys := b.seedAs(200, "cm-%03d", func(int) string { return `,"data":{"v":"0"}` })
		start := func(id string) *bubbleReplica {
			return b.startWith(id, replicaSpec{mgr: demoOnly, reconcile: b.writeBack})
		}
		var rs []*bubbleReplica
		for i := range 3 {
			rs = append(rs, start(fmt.Sprintf("replica-%d", i)))
		}
		b.waitRing(rs, keys)

		rng := rand.New(rand.NewPCG(7, 7))
		last := map[string]int{}
		write := func(n int) {
			for range n {
				k := keys[rng.IntN(len(keys))]
				last[k]++
				ns, name, _ := strings.Cut(k, "/")
				_, err := b.srv.Patch("configmaps", ns, name, fmt.Appendf(nil, `{"data":{"v":"%d"}}`, last[k]))
				require.NoError(t, err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		write(200)
		cut := b.inject(sim.Fault{Type: sim.FaultCutWatch, Resource: "configmaps", Count: 2, AfterEvents: 5})
		b.srv.DropWatches(false) // every open watch ends; the new ones take the cuts
		write(200)
		require.NoError(t, cut.Wait(ctx, 2))
		errs := b.inject(sim.Fault{Type: sim.FaultError, Code: 500, Resource: "configmaps", Match: "write", Count: 20})
		write(200)
		require.NoError(t, errs.Wait(ctx, 20))
		leaseErrs := b.inject(sim.Fault{Type: sim.FaultError, Code: 500, Resource: "leases.coordination.k8s.io", Count: 3})
		rs[0].crash()
		write(200)
		rs = append(rs[1:], start("replica-3"))
		write(200)
		require.NoError(t, leaseErrs.Wait(ctx, 3))
		b.srv.ClearFaults()

		b.waitRing(rs, keys)
		lost := func() []string {
			var out []string
			_, objs, err := b.srv.Snapshot("configmaps")
			require.NoError(t, err)
			for _, o := range objs {
				var cm Obj
				require.NoError(t, json.Unmarshal(o.JSON, &cm))
				if want := fmt.Sprint(last["demo/"+o.Name]); cm.Annotations["seen"] != want || cm.Data["v"] != want {
					out = append(out, fmt.Sprintf("%s: v=%s seen=%s want %s", o.Name, cm.Data["v"], cm.Annotations["seen"], want))
				}
			}
			return out
		}
		if !within(time.Minute, func() bool { return len(lost()) == 0 }) {
			t.Fatalf("lost updates: %v", lost())
		}
		require.Empty(t, b.rec.overlapList())
		t.Logf("%d reconciles, 0 overlaps, 0 lost updates", b.rec.count())
	})
}
