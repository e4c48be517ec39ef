package controller_test

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
	"github.com/kwatch/kwatch/shard"
)

// replica is one manager of the fencing tests, with the default lease
// timings: under leader election on the cluster's Lease "managers", or a
// member of the ring "cms". Its controller "cms" reconciles ConfigMaps,
// recorded in the history around each reconcile.
type replica struct {
	name     string // the history's name for it and its link's
	identity string // its Lease identity; "" is name
	sharded  bool   // a ring member, else under leader election
	// reconcile builds its reconciler from the manager's fenced client;
	// nil touches each key as name, and, once late holds a key, starts
	// one more write of it that outlives the reconcile (a goroutine with
	// the reconcile's context without its cancel, so the fence still
	// checks the key), marked "late", which gives up after cutOff (0:
	// never), as a write under a deadline of its own does.
	reconcile func(cms *client.Client[*Obj]) controller.Reconciler
	late      *atomic.Pointer[controller.Key]
	cutOff    time.Duration
}

// electedReplica is a running replica: until stop.
type electedReplica struct {
	id     string
	mgr    *controller.Manager
	cms    *client.Client[*Obj] // through the manager's fenced client
	link   *fenceLink
	proxy  *proxied // in front of link: passes every request until told otherwise
	cancel context.CancelFunc
	done   chan error
}

// start starts the replica spec describes.
func (c *fenceCluster) start(spec replica) *electedReplica {
	t := c.t
	t.Helper()
	if spec.identity == "" {
		spec.identity = spec.name
	}
	r := &electedReplica{id: spec.name, done: make(chan error, 1)}
	kc, link, proxy := c.connect(spec.name)
	r.link, r.proxy = link, proxy
	opts := controller.ManagerOptions{Logger: quiet()}
	if spec.sharded {
		opts.Sharding = &shard.Config{Namespace: "demo", Ring: "cms", Identity: spec.identity}
	} else {
		opts.LeaderElection = &leader.Config{Namespace: "demo", Name: "managers", Identity: spec.identity}
	}
	m, err := controller.NewManager(kc, opts)
	require.NoError(t, err)
	r.mgr = m
	r.cms = client.For(m.Client(), kube.Typed[*Obj](kube.ConfigMaps), client.Options{})
	rec := spec.reconciler(r.cms)
	_, err = controller.New(m, controller.Config[*Obj]{Name: "cms", For: kube.Typed[*Obj](kube.ConfigMaps),
		Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
			end := c.h.begin(ctx, spec.name, key.String())
			defer end()
			return rec(ctx, key)
		}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- m.Run(ctx) }()
	t.Cleanup(func() { r.stop() })
	return r
}

// reconciler is spec's reconciler on cms (see replica.reconcile).
func (spec replica) reconciler(cms *client.Client[*Obj]) controller.Reconciler {
	if spec.reconcile != nil {
		return spec.reconcile(cms)
	}
	return func(ctx context.Context, key controller.Key) (controller.Result, error) {
		if late := spec.late; late != nil {
			if k := late.Load(); k != nil && *k == key && late.CompareAndSwap(k, nil) {
				go func() {
					wctx, cancel := context.WithoutCancel(ctx), context.CancelFunc(func() {})
					if spec.cutOff > 0 {
						wctx, cancel = context.WithTimeout(wctx, spec.cutOff)
					}
					defer cancel()
					_ = touch(wctx, cms, key, "late")
				}()
			}
		}
		return controller.Result{}, touch(ctx, cms, key, spec.name)
	}
}

// stop cancels the replica and returns Run's error (once).
func (r *electedReplica) stop() error {
	r.cancel()
	err, ok := <-r.done
	if ok {
		close(r.done)
	}
	return err
}
