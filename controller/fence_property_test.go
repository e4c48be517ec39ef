package controller_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
	"github.com/kwatch/kwatch/shard"
)

// The randomized property tests of the fence: three replicas (leader
// election, or one shard ring) with the default timings, reconcilers
// that often ignore their context and write late, and for ten minutes
// of fake time random faults on one replica at a time: its Lease writes
// answered 500, its link partitioned, its elector's (or member's)
// goroutine frozen while the rest of it runs, a restart as a new
// process. The checks read only the history (fence_rig_test.go): no key
// is reconciled by two replicas at once, and no write reaches the server
// from a replica after another started reconciling its key (or, under
// leader election, while the Lease named another holder).

// slot is one replica's place: each start is a new process with a new
// identity and link; a Run that ends (lost Lease, fence) starts the next.
type slot struct {
	n      int
	c      *fenceCluster
	p      testutil.Freeze
	newMgr func(kc *kube.Client, id string, log *testutil.Freeze) (*controller.Manager, error)

	mu     sync.Mutex
	link   *fenceLink // the current process's; guarded by mu
	gen    int        // guarded by mu
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *slot) current() *fenceLink {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.link
}

// start runs processes on the slot until stop.
func (s *slot) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		for ctx.Err() == nil {
			s.mu.Lock()
			s.gen++
			id := fmt.Sprintf("r%d-%d", s.n, s.gen)
			s.mu.Unlock()
			kc, l, _ := s.c.connect(id)
			s.mu.Lock()
			s.link = l
			s.mu.Unlock()
			m, err := s.newMgr(kc, id, &s.p)
			if err != nil {
				panic(err)
			}
			if err := m.Run(ctx); err != nil && !errors.Is(err, leader.ErrLost) && !errors.Is(err, shard.ErrFenced) {
				panic(fmt.Sprintf("%s: %v", id, err))
			}
		}
	}()
}

// stop ends the slot's process. It reports false if Run had not returned
// after twice ShutdownTimeout (a wedged replica).
func (s *slot) stop() bool {
	s.p.Thaw()
	s.cancel()
	select {
	case <-s.done:
		return true
	case <-time.After(2 * controller.DefaultShutdownTimeout):
		return false
	}
}

// lateWriter is the reconciler of the property tests: it writes its key,
// then either waits (honouring its context) or sleeps ignoring it and
// writes again with and without the key, as a careless reconciler would.
type lateWriter struct {
	mu      sync.Mutex
	rng     *rand.Rand
	fenced  atomic.Int64 // writes refused with kube.IsFenced
	written atomic.Int64
}

func (w *lateWriter) draw(n int64) int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rng.Int64N(n)
}

func (w *lateWriter) note(err error) error {
	switch {
	case err == nil:
		w.written.Add(1)
	case kube.IsFenced(err):
		w.fenced.Add(1)
		return nil
	}
	return err
}

func (w *lateWriter) reconciler(h *history, id string, cms *client.Client[*Obj]) controller.Reconciler {
	return func(ctx context.Context, key controller.Key) (controller.Result, error) {
		end := h.begin(ctx, id, key.String())
		defer end()
		if err := w.note(touch(ctx, cms, key, id)); err != nil && ctx.Err() == nil {
			return controller.Result{}, err
		}
		d := time.Duration(w.draw(int64(20 * time.Second)))
		if w.draw(2) == 0 {
			select {
			case <-ctx.Done():
				return controller.Result{}, nil
			case <-time.After(d / 4):
			}
			_ = w.note(touch(ctx, cms, key, id))
		} else {
			time.Sleep(d) // ignores ctx
			_ = w.note(touch(context.WithoutCancel(ctx), cms, key, id))
			_ = w.note(touch(context.Background(), cms, key, id))
		}
		return controller.Result{RequeueAfter: time.Second + time.Duration(w.draw(int64(4*time.Second)))}, nil
	}
}

// faults runs random faults on the slots for d of fake time, then undoes
// them and lets the replicas settle.
func faults(t *testing.T, rng *rand.Rand, slots []*slot, d time.Duration) int {
	end := time.Now().Add(d)
	n := 0
	for time.Now().Before(end) {
		time.Sleep(time.Duration(rng.Int64N(int64(8 * time.Second))))
		s := slots[rng.IntN(len(slots))]
		l := s.current()
		switch rng.IntN(5) {
		case 0:
			l.setFailLeases(true)
		case 1:
			l.setFailLeases(false)
			l.heal()
			s.p.Thaw()
		case 2:
			l.partition()
		case 3: // frozen elector: it blocks on the log line of its first failed renew
			s.p.Freeze()
			l.setFailLeases(true)
		default:
			require.True(t, s.stop(), "%s stopped within twice ShutdownTimeout", s.current().id)
			s.start()
		}
		n++
	}
	for _, s := range slots {
		s.p.Thaw()
		l := s.current()
		l.setFailLeases(false)
		l.heal()
	}
	time.Sleep(leader.DefaultLeaseDuration + 3*leader.DefaultRetryPeriod)
	synctest.Wait()
	return n
}

// fenceProperty runs the property test; object has the controller
// reconcile through ReconcileObject instead of Reconcile.
func fenceProperty(t *testing.T, seed uint64, sharded, object bool) {
	rng := rand.New(rand.NewPCG(seed, 23))
	c := newFenceCluster(t)
	names := make([]string, 12)
	for i := range names {
		names[i] = fmt.Sprintf("cm-%02d", i)
	}
	c.seed(names...)
	w := &lateWriter{rng: rand.New(rand.NewPCG(seed, 24))}
	newMgr := func(kc *kube.Client, id string, p *testutil.Freeze) (*controller.Manager, error) {
		opts := controller.ManagerOptions{Logger: quiet()}
		if sharded {
			opts.Sharding = &shard.Config{Namespace: "demo", Ring: "cms", Identity: id, Logger: slogOf(p)}
		} else {
			opts.LeaderElection = &leader.Config{Namespace: "demo", Name: "managers", Identity: id, Logger: slogOf(p)}
		}
		m, err := controller.NewManager(kc, opts)
		if err != nil {
			return nil, err
		}
		cms := client.For(m.Client(), kube.Typed[*Obj](kube.ConfigMaps), client.Options{})
		cfg := controller.Config[*Obj]{Name: "cms", For: kube.Typed[*Obj](kube.ConfigMaps), Workers: 4,
			Reconcile: w.reconciler(c.h, id, cms)}
		if object {
			rec := cfg.Reconcile
			cfg.Reconcile = nil
			cfg.ReconcileObject = func(ctx context.Context, obj *Obj) (controller.Result, error) {
				return rec(ctx, controller.KeyOf(obj))
			}
		}
		_, err = controller.New(m, cfg)
		return m, err
	}
	slots := make([]*slot, 3)
	for i := range slots {
		slots[i] = &slot{n: i, c: c, newMgr: newMgr}
		slots[i].start()
	}
	t.Cleanup(func() {
		for _, s := range slots {
			if !s.stop() {
				<-s.done // the failure is reported; wait anyway, the bubble needs it
			}
		}
	})
	n := faults(t, rng, slots, 10*time.Minute)

	require.Empty(t, c.h.overlaps(), "a key reconciled by two replicas at once")
	require.Empty(t, c.h.staleWrites(!sharded), "a write from a replica that had lost its Lease or key reached the server")
	writes, reconciles := c.h.count()
	require.Positive(t, w.fenced.Load(), "some late writes were fenced (else the test did not test the fence)")
	t.Logf("%d faults, %d reconciles, %d writes applied, %d writes fenced", n, reconciles, writes, w.fenced.Load())
}

func TestFencePropertyLeaderElection(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { fenceProperty(t, seed, false, false) })
		})
	}
}

func TestFencePropertySharded(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { fenceProperty(t, seed, true, false) })
		})
	}
}

// TestFencePropertyReconcileObject runs the property, one seed of each
// kind, with the controller's ReconcileObject: the object's reconcile
// goes through the same shard gate and fence as a key's.
func TestFencePropertyReconcileObject(t *testing.T) {
	for _, sharded := range []bool{false, true} {
		t.Run(map[bool]string{false: "leader election", true: "sharded"}[sharded], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { fenceProperty(t, 0, sharded, true) })
		})
	}
}
