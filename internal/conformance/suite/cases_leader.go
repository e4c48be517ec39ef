package suite

import (
	"context"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
)

// leaderCases pit kwatch's leader election against client-go's on one
// Lease.
func leaderCases() []Case {
	return []Case{
		{Name: "leader/kwatch-and-client-go-never-both-lead", Run: testLeaderAgainstClientGo},
		{Name: "leader/lost-lease-fences-the-deposed-leader", Run: testLostLeaseFences},
	}
}

// leaderLease is the Lease both candidates compete for.
const leaderLease = "conformance-leader"

// leaderStep bounds each wait for a candidate to lead: a lease duration
// plus a few retry periods, with slack for a loaded machine.
const leaderStep = 30 * time.Second

// testLeaderAgainstClientGo runs a kwatch candidate as a process and a
// client-go LeaderElector (resourcelock.LeaseLock) in the test process,
// same Lease, same 4 s / 3 s / 500 ms timing. The leader is stopped in
// turn: the kwatch process killed with SIGKILL (no release: the other
// side must wait for the lease to expire), client-go cancelled with
// ReleaseOnCancel and without, the kwatch process sent SIGTERM (it
// releases), each time with a fresh candidate started on the stopped
// side. Each side's
// leading intervals (from its leading callback to the end of its leading
// context; a killed process's ends when it is seen gone) must never
// overlap, and failover times are logged.
func testLeaderAgainstClientGo(t T, e *Env) {
	cfg := e.Target.Config(Admin)
	tl := newTimeline()
	goCfg := clientGoConfig(cfg)

	k1 := startCandidateProc(t, cfg, e.NS, leaderLease, "kwatch-1", tl)
	waitLeader(t, e, tl, "kwatch-1")
	g1 := startClientGo(t, e, goCfg, "client-go-1", true, tl)
	time.Sleep(2 * electLease) // both campaign; kwatch-1 keeps renewing
	requireLeader(t, tl, "kwatch-1")

	killed := k1.kill(syscall.SIGKILL)
	since := waitLeader(t, e, tl, "client-go-1")
	t.Logf("failover after kill -9 of the kwatch leader: %v (lease duration %v)", since.Sub(killed).Round(time.Millisecond), electLease)
	// kwatch-1 still led at the kill, so its last renew started less than
	// a renew deadline before it, and client-go saw it no earlier.
	if since.Sub(killed) < electLease-electRenew {
		t.Errorf("client-go took over %v after the kill, before the lease could expire (%v after a renew less than %v before the kill)", since.Sub(killed), electLease, electRenew)
	}

	k2 := startCandidateProc(t, cfg, e.NS, leaderLease, "kwatch-2", tl)
	time.Sleep(2 * electLease)
	requireLeader(t, tl, "client-go-1")
	released := g1.stop()
	since = waitLeader(t, e, tl, "kwatch-2")
	t.Logf("handover after client-go released the lease: %v (retry period %v)", since.Sub(released).Round(time.Millisecond), electRetry)

	g2 := startClientGo(t, e, goCfg, "client-go-2", false, tl)
	time.Sleep(2 * electLease)
	requireLeader(t, tl, "kwatch-2")
	killed = k2.kill(syscall.SIGKILL)
	since = waitLeader(t, e, tl, "client-go-2")
	t.Logf("failover after kill -9 of the kwatch leader: %v", since.Sub(killed).Round(time.Millisecond))

	k3 := startCandidateProc(t, cfg, e.NS, leaderLease, "kwatch-3", tl)
	time.Sleep(electLease)
	stopped := g2.stop() // without release: kwatch-3 waits for the lease to expire
	since = waitLeader(t, e, tl, "kwatch-3")
	t.Logf("failover after client-go stopped without releasing: %v", since.Sub(stopped).Round(time.Millisecond))
	if since.Sub(stopped) < electLease-electRenew {
		t.Errorf("kwatch took over %v after client-go stopped, before the lease could expire", since.Sub(stopped))
	}

	g3 := startClientGo(t, e, goCfg, "client-go-3", true, tl)
	time.Sleep(electLease)
	released = k3.kill(syscall.SIGTERM)
	since = waitLeader(t, e, tl, "client-go-3")
	t.Logf("handover after the kwatch leader released the lease on SIGTERM: %v", since.Sub(released).Round(time.Millisecond))
	g3.stop()

	bad, all := tl.overlaps()
	for _, b := range bad {
		t.Errorf("two leaders at once: %s", b)
	}
	for _, iv := range all {
		t.Logf("%-12s led %s to %s (%v)", iv.who, iv.start.Format(time.StampMilli), iv.end.Format(time.StampMilli), iv.end.Sub(iv.start).Round(time.Millisecond))
	}
	leases := client.For(newClient(t, cfg), kube.Typed[*leader.Lease](kube.Leases), client.Options{})
	l, err := leases.Get(e.Ctx, e.NS, leaderLease, client.GetOptions{})
	if err != nil {
		t.Errorf("read the lease: %v", err)
		t.FailNow()
	}
	if got, want := deref(l.Spec.LeaseTransitions), int32(len(all)-1); got != want {
		t.Errorf("leaseTransitions %d after %d leaderships; want %d (one per change of holder)", got, len(all), want)
	}
	if h := deref(l.Spec.HolderIdentity); h != "" {
		t.Errorf("holderIdentity %q after client-go's release; want empty", h)
	}
}

func deref[V any](p *V) V {
	var zero V
	if p == nil {
		return zero
	}
	return *p
}

// waitLeader waits until who leads and returns since when.
func waitLeader(t T, e *Env, tl *timeline, who string) time.Time {
	t.Helper()
	var since time.Time
	eventually(t, e, leaderStep, who+" leads", func() bool {
		got, s, ok := tl.leading()
		since = s
		return ok && got == who
	})
	return since
}

func requireLeader(t T, tl *timeline, who string) {
	t.Helper()
	if got, _, ok := tl.leading(); !ok || got != who {
		t.Errorf("leader is %q (leading: %v); want %q still leading", got, ok, who)
		t.FailNow()
	}
}

// clientGoConfig is cfg for client-go.
func clientGoConfig(cfg *kube.Config) *rest.Config {
	return &rest.Config{Host: cfg.Host, BearerToken: cfg.Auth.BearerToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: cfg.TLS.CAData}}
}

// clientGoCandidate is a client-go LeaderElector running in the test process.
type clientGoCandidate struct {
	cancel context.CancelFunc
	done   chan struct{} // closed once Run and the leading callback returned
}

func startClientGo(t T, e *Env, cfg *rest.Config, id string, release bool, tl *timeline) *clientGoCandidate {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Errorf("client-go clientset: %v", err)
		t.FailNow()
	}
	// client-go runs OnStartedLeading on a goroutine it does not wait
	// for, which may even start after Run returned; the case waits for it,
	// and a callback that starts once leadership is over records nothing.
	var (
		mu       sync.Mutex
		finished bool // Run returned; guarded by mu
		active   sync.WaitGroup
	)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{LeaseMeta: metav1.ObjectMeta{Namespace: e.NS, Name: leaderLease},
			Client: cs.CoordinationV1(), LockConfig: resourcelock.ResourceLockConfig{Identity: id}},
		LeaseDuration: electLease, RenewDeadline: electRenew, RetryPeriod: electRetry,
		ReleaseOnCancel: release, Name: id,
		Callbacks: leaderelection.LeaderCallbacks{
			// Leadership ends when ctx does: client-go cancels it before it
			// releases the Lease, and before Run returns.
			OnStartedLeading: func(ctx context.Context) {
				mu.Lock()
				if finished || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				active.Add(1)
				tl.start(id, time.Now())
				mu.Unlock()
				defer active.Done()
				<-ctx.Done()
				tl.stop(id, time.Now())
			},
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		t.Errorf("client-go LeaderElector: %v", err)
		t.FailNow()
	}
	ctx, cancel := context.WithCancel(e.Ctx)
	c := &clientGoCandidate{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		le.Run(ctx)
		mu.Lock()
		finished = true
		mu.Unlock()
		active.Wait()
	}()
	t.Cleanup(func() { c.stop() })
	return c
}

// stop cancels the elector and waits for it; it returns when it was
// cancelled.
func (c *clientGoCandidate) stop() time.Time {
	at := time.Now()
	c.cancel()
	<-c.done
	return at
}
