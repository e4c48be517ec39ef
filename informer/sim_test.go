package informer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/kube"
)

// replayer is a handler that rebuilds the server's state from the calls it
// receives, and records every call that contradicts what it was told
// before (an add for a key it knows, an update or delete for one it does
// not, an old object that is not the one it last saw).
type replayer struct {
	mu         sync.Mutex
	state      map[string]string // key -> resourceVersion
	violations []string
	calls      int
}

func newReplayer() *replayer { return &replayer{state: map[string]string{}} }

func (r *replayer) OnAdd(p *testPod, _ bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	k := key(p)
	if rv, ok := r.state[k]; ok {
		r.violations = append(r.violations, fmt.Sprintf("add of known %s (have rv %s, got %s)", k, rv, p.ResourceVersion))
	}
	r.state[k] = p.ResourceVersion
}

func (r *replayer) OnUpdate(old, p *testPod) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	k := key(p)
	if rv, ok := r.state[k]; !ok || rv != old.ResourceVersion {
		r.violations = append(r.violations, fmt.Sprintf("update of %s from rv %s, but handler had %q (known %v)", k, old.ResourceVersion, rv, ok))
	}
	r.state[k] = p.ResourceVersion
}

func (r *replayer) OnDelete(p *testPod, _ bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	k := key(p)
	if _, ok := r.state[k]; !ok {
		r.violations = append(r.violations, "delete of unknown "+k)
	}
	delete(r.state, k)
}

func (r *replayer) snapshot() (map[string]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]string, len(r.state))
	for k, v := range r.state {
		out[k] = v
	}
	return out, append([]string(nil), r.violations...)
}

func serverState(t *testing.T, srv *sim.Server) map[string]string {
	_, objs, err := srv.Snapshot("pods")
	require.NoError(t, err)
	out := make(map[string]string, len(objs))
	for _, o := range objs {
		out[o.Namespace+"/"+o.Name] = strconv.FormatUint(o.ResourceVersion, 10)
	}
	return out
}

// randomFault injects one fault of a random kind and returns it.
func randomFault(t *testing.T, srv *sim.Server, rng *rand.Rand) sim.Fault {
	codes := []int{429, 500, 503}
	faults := []sim.Fault{
		{Type: sim.FaultDropWatch, AfterEvents: rng.IntN(5)},
		{Type: sim.FaultCutWatch, AfterEvents: rng.IntN(5)},
		{Type: sim.FaultStall, Match: "watch", AfterEvents: rng.IntN(3)},
		{Type: sim.FaultError, Match: []string{"list", "watch"}[rng.IntN(2)], Code: codes[rng.IntN(3)]},
		{Type: sim.ActionCompact},
		{Type: sim.ActionExpireContinue},
		{Type: sim.ActionDropWatches, LoseHistory: rng.IntN(2) == 0},
		{Type: sim.FaultSplitWrites, Match: "watch"},
	}
	f := faults[rng.IntN(len(faults))]
	require.NoError(t, srv.InjectFault(f))
	return f
}

// awaitFired waits until the simulator has applied fault f (of type typ)
// more than before times, writing meanwhile so that watch faults meet
// events. While no request has taken the fault, it ends the watches now and
// then, so that it meets a new request (a resumed watch first confirms its
// RV with a list, which list faults need). A watch can take a fault and end
// before applying it (ended by those drops, or by a 410); the simulator
// then never fires it, so after a quiet second it is dealt again. The test
// fails if the fault never fires.
func awaitFired(t *testing.T, srv *sim.Server, f sim.Fault, before int64, rng *rand.Rand) {
	t.Helper()
	deadline := time.Now().Add(waitLong)
	untaken := 0
	for i := 0; srv.FiredFaults()[f.Type] <= before; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("fault %s was scheduled but never fired (pending %v, fired %v)", f.Type, srv.Faults(), srv.FiredFaults())
		}
		_, err := srv.PutPod(sim.Pod{Namespace: "ns-0", Name: fmt.Sprintf("p-%d", rng.IntN(80)), Restarts: int32(i)})
		require.NoError(t, err)
		switch pending := len(srv.Faults()) > 0; {
		case pending && i%20 == 19:
			srv.DropWatches(false)
		case !pending:
			if untaken++; untaken == 200 {
				require.NoError(t, srv.InjectFault(f))
				untaken = 0
			}
		}
		time.Sleep(tick)
	}
}

func simOptions(t *testing.T, url string, mode ListMode) Options[*testPod] {
	c, err := kube.NewClient(&kube.Config{Host: url})
	require.NoError(t, err)
	return Options[*testPod]{
		Client: c, Resource: kube.Pods,
		Logger: quietLogger(),
		Tuning: Tuning{ListMode: mode, PageSize: 7, Backoff: Backoff{Initial: 5 * time.Millisecond, Max: 50 * time.Millisecond}, IdleTimeout: time.Second},
	}
}

// TestPropertyConvergesUnderFaults drives random creates, updates and
// deletes with random faults against the simulated server; afterwards the
// store must equal the server's state exactly, and so must the state
// rebuilt from the handler calls, with no contradictory call on the way.
// KWATCH_PROPERTY_SEEDS sets how many seeds run (default 4).
func TestPropertyConvergesUnderFaults(t *testing.T) {
	seeds := 4
	if s, err := strconv.Atoi(os.Getenv("KWATCH_PROPERTY_SEEDS")); err == nil && s > 0 {
		seeds = s
	}
	for _, sm := range []StoreMode{StoreTyped, StoreCompact} {
		for seed := 1; seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", sm, seed), func(t *testing.T) { runProperty(t, uint64(seed), sm) })
		}
	}
}

func runProperty(t *testing.T, seed uint64, sm StoreMode) {
	rng := rand.New(rand.NewPCG(seed, 99))
	h := simkit.Start(t, sim.Options{HistorySize: 100, BookmarkInterval: 200 * time.Millisecond, Seed: seed})
	srv := h.Server
	for i := 0; i < 40; i++ {
		_, err := srv.PutPod(sim.Pod{Namespace: fmt.Sprintf("ns-%d", i%3), Name: fmt.Sprintf("p-%d", i)})
		require.NoError(t, err)
	}
	mode := []ListMode{ListAuto, ListPaged}[seed%2]
	opts := simOptions(t, h.URL, mode)
	opts.Store = sm
	if sm == StoreCompact {
		opts.Snapshot = &SnapshotOptions{Path: filepath.Join(t.TempDir(), "pods.snap"), Interval: 20 * time.Millisecond}
	}
	inf, rep, stop := startReplayed(t, opts)
	require.True(t, inf.WaitForSync(ctxTimeout(t)), "initial sync")

	scheduled := map[sim.FaultType]int64{}
	restarts, restored := 0, 0
	churn := func() {
		name := fmt.Sprintf("p-%d", rng.IntN(80))
		ns := fmt.Sprintf("ns-%d", rng.IntN(3))
		if rng.IntN(100) < 70 {
			_, err := srv.PutPod(sim.Pod{Namespace: ns, Name: name, Restarts: int32(rng.IntN(100))})
			require.NoError(t, err)
		} else {
			_, _ = srv.Delete("pods", ns, name) // may not exist
		}
	}
	for step := 0; step < 300; step++ {
		switch x := rng.IntN(100); {
		case x < 85:
			churn()
		case x < 88 && sm == StoreCompact:
			// A restart from the snapshot, with changes made while down.
			stop()
			if inf.Stats().Restored {
				restored++
			}
			restarts++
			for range rng.IntN(20) {
				churn()
			}
			inf, rep, stop = startReplayed(t, opts)
		default:
			// A fault counts once it fired: the informer met it before the
			// next one is dealt.
			before := srv.FiredFaults()
			f := randomFault(t, srv, rng)
			scheduled[f.Type]++
			awaitFired(t, srv, f, before[f.Type], rng)
		}
		time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond) // let the informer interleave
	}
	srv.ClearFaults()
	fired := srv.FiredFaults()
	for typ, n := range scheduled {
		// Ending watches to meet a fault counts as drop-watches too.
		if typ != sim.ActionDropWatches {
			require.Equal(t, n, fired[typ], "fault %s: scheduled %d, fired %d", typ, n, fired[typ])
		}
	}
	want := serverState(t, srv)
	require.Eventually(t, func() bool {
		got, _ := rep.snapshot()
		return mapsEqual(storeRVs(inf), want) && mapsEqual(got, want)
	}, waitLong, 10*time.Millisecond, "store and handler replay converge to the server (faults fired %v)", fired)
	_, violations := rep.snapshot()
	require.Empty(t, violations, "contradictory handler calls")
	t.Logf("seed %d mode %d store %s: %d objects, faults fired %v, %d restarts (%d from a snapshot), stats %+v",
		seed, mode, sm, len(want), fired, restarts, restored, inf.Stats())
}

// startReplayed runs a new informer with opts and a replayer as its
// handler; stop cancels it and waits for Run to return (a compact
// informer with a snapshot writes it then).
func startReplayed(t *testing.T, opts Options[*testPod]) (*Informer[*testPod], *replayer, func()) {
	inf, err := New(opts)
	require.NoError(t, err)
	rep := newReplayer()
	_, err = inf.AddHandler(rep, HandlerOptions{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(stop)
	return inf, rep, stop
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func ctxTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	t.Cleanup(cancel)
	return ctx
}

// TestStalledHandlerStaysBounded blocks one handler while 100,000 events
// stream: the other handler keeps pace, the heap stays bounded by the
// number of objects, and once unblocked the slow handler sees the final
// state of every object.
func TestStalledHandlerStaysBounded(t *testing.T) {
	events := 100000
	if testing.Short() {
		events = 10000
	}
	// A small history: the server in this process must not hold the
	// events itself, or the heap figure would measure the server.
	h := simkit.Start(t, sim.Options{HistorySize: 2000})
	srv := h.Server
	const pods = 100
	for i := 0; i < pods; i++ {
		_, err := srv.PutPod(sim.Pod{Namespace: "ns", Name: fmt.Sprintf("p-%d", i)})
		require.NoError(t, err)
	}
	inf, err := New(simOptions(t, h.URL, ListPaged))
	require.NoError(t, err)
	gate := make(chan struct{})
	slow := newReplayer()
	blocked := HandlerFuncs[*testPod]{
		AddFunc:    func(p *testPod, i bool) { <-gate; slow.OnAdd(p, i) },
		UpdateFunc: func(o, p *testPod) { <-gate; slow.OnUpdate(o, p) },
		DeleteFunc: func(p *testPod, u bool) { <-gate; slow.OnDelete(p, u) },
	}
	slowReg, err := inf.AddHandler(blocked, HandlerOptions{})
	require.NoError(t, err)
	fast := newReplayer()
	_, err = inf.AddHandler(fast, HandlerOptions{})
	require.NoError(t, err)
	start(t, inf)
	var closeGate sync.Once
	unblock := func() { closeGate.Do(func() { close(gate) }) }
	t.Cleanup(unblock) // runs before start's cleanup waits for Run
	require.True(t, inf.WaitForSync(ctxTimeout(t)))

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var maxBacklog int
	for i := 0; i < events; i++ {
		_, err := srv.PutPod(sim.Pod{Namespace: "ns", Name: fmt.Sprintf("p-%d", i%pods), Restarts: int32(i)})
		require.NoError(t, err)
		if i%1000 == 0 {
			maxBacklog = max(maxBacklog, slowReg.Backlog())
		}
	}
	want := serverState(t, srv)
	require.Eventually(t, func() bool { got, _ := fast.snapshot(); return mapsEqual(got, want) },
		waitLong, 10*time.Millisecond, "the fast handler keeps pace while the other is blocked")
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d events; slow handler backlog max %d; heap growth %d KB", events, maxBacklog, growth/1024)
	require.LessOrEqual(t, slowReg.Backlog(), pods+1, "pending work is bounded by the number of objects")
	// 100,000 retained events of ~4 KB would be ~400 MB; the store plus one
	// pending state per object is well under a megabyte.
	require.Less(t, growth, int64(64<<20), "heap must not grow with the number of events")

	unblock()
	require.Eventually(t, func() bool { got, _ := slow.snapshot(); return mapsEqual(got, want) },
		waitLong, 10*time.Millisecond, "after unblocking, the slow handler reaches the final state")
	_, violations := slow.snapshot()
	require.Empty(t, violations)
}
