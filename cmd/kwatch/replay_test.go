package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// replica applies a stream of printed watch events to a map, as a reader
// of "kwatch -o json --output-watch-events" would.
type replica struct {
	mu      sync.Mutex
	objects map[string]string // namespace/name -> resourceVersion
	events  map[string]int    // count per event type
	deleted map[string]int    // namespace/name -> DELETED events printed for it
	seq     []printed         // every event, in the order printed
	err     error             // a decoding error or an unknown event type
	changed chan struct{}     // closed and replaced by every apply and fail
	ended   chan struct{}
}

func replay(r io.Reader) *replica {
	rp := &replica{objects: map[string]string{}, events: map[string]int{}, deleted: map[string]int{},
		changed: make(chan struct{}), ended: make(chan struct{})}
	go func() { // ends when the process closes its stdout
		defer close(rp.ended)
		dec := json.NewDecoder(r)
		for {
			var ev struct {
				Type   string `json:"type"`
				Object struct {
					Metadata struct{ Namespace, Name, ResourceVersion string }
				} `json:"object"`
			}
			if err := dec.Decode(&ev); err != nil {
				if err != io.EOF {
					rp.fail(err)
				}
				return
			}
			rp.apply(ev.Type, ev.Object.Metadata.Namespace+"/"+ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion)
		}
	}()
	return rp
}

// printed is one printed event.
type printed struct{ typ, key, rv string }

func (p printed) String() string { return p.typ + " " + p.key + "@" + p.rv }

func (rp *replica) apply(typ, key, rv string) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	rp.events[typ]++
	rp.seq = append(rp.seq, printed{typ, key, rv})
	switch typ {
	case "ADDED", "MODIFIED":
		rp.objects[key] = rv
	case "DELETED":
		delete(rp.objects, key)
		rp.deleted[key]++
	default:
		rp.err = fmt.Errorf("unexpected event type %q for %s", typ, key)
	}
	rp.notifyLocked()
}

func (rp *replica) fail(err error) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	rp.err = err
	rp.notifyLocked()
}

// notifyLocked wakes every waitUntil; rp.mu must be held.
func (rp *replica) notifyLocked() {
	close(rp.changed)
	rp.changed = make(chan struct{})
}

// waitUntil waits until cond holds for the replica, checking it each time
// an event is applied: no polling. It fails the test on a decoding error,
// if the output ends first, or after wait, a guard against a hang rather
// than a speed limit.
func (rp *replica) waitUntil(t *testing.T, what string, cond func(objects map[string]string, events map[string]int) bool) {
	t.Helper()
	timeout := time.After(wait)
	for ended := false; ; {
		rp.mu.Lock()
		ok, err, changed := cond(rp.objects, rp.events), rp.err, rp.changed
		rp.mu.Unlock()
		switch {
		case err != nil:
			t.Fatalf("%s: %v", what, err)
		case ok:
			return
		case ended:
			t.Fatalf("%s: the output ended first", what)
		}
		select {
		case <-changed:
		case <-rp.ended:
			ended = true // look once more: the last event may have come with the end
		case <-timeout:
			rp.mu.Lock()
			n, events := len(rp.objects), maps.Clone(rp.events)
			rp.mu.Unlock()
			t.Fatalf("%s: not within %s (the replica holds %d objects; events printed: %v)", what, wait, n, events)
		}
	}
}

func (rp *replica) snapshot() (map[string]string, map[string]int, error) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return maps.Clone(rp.objects), maps.Clone(rp.events), rp.err
}

// sequence returns every event printed so far, in order.
func (rp *replica) sequence() []printed {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return append([]printed(nil), rp.seq...)
}

// deletes returns how many DELETED events were printed so far, per object.
func (rp *replica) deletes() map[string]int {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return maps.Clone(rp.deleted)
}

// injectFaults disconnects kwatch in every way the simulator knows, one
// after another: each fault must fire (be applied to one of kwatch's
// requests, not just queued) and kwatch must watch again before the next.
// Watch faults fire only on a watch that gets events, so the server must
// be changing meanwhile. It returns the faults dealt, per kind.
func injectFaults(t *testing.T, srv *sim.Server) map[sim.FaultType]int64 {
	t.Helper()
	fs := &faultSchedule{t: t, srv: srv, dealt: map[sim.FaultType]int64{}}
	watches := func() uint64 { return srv.Stats().ByResource["pods"].Watch }
	reconnected := func(after uint64) {
		eventually(t, "kwatch watches again", func() bool {
			return watches() > after && srv.Stats().ActiveWatches > 0
		})
	}
	n := watches()
	fs.dropWatches(false) // a server restart that keeps its history: resume from the last RV
	fs.awaitFired()
	reconnected(n)

	n = watches()
	fs.inject(sim.Fault{Type: sim.FaultCutWatch, Match: "watch", Resource: "pods", AfterEvents: 3})
	fs.dropWatches(false) // the resumed watch is cut in the middle of a frame
	fs.awaitFired()
	reconnected(n + 1)

	// A longer outage: the watch fails for a while, objects are deleted
	// meanwhile, and the history is gone when it comes back (410, relist).
	n = watches()
	fs.inject(sim.Fault{Type: sim.FaultError, Match: "watch", Resource: "pods", Code: 503, Count: 2, RetryAfterSeconds: 1})
	fs.dropWatches(true)
	deleteSome(t, srv, 10)
	fs.awaitFired()
	reconnected(n + 2)

	n = watches()
	fs.compact() // resuming from any earlier RV now gets 410
	fs.dropWatches(false)
	fs.awaitFired()
	reconnected(n)

	n = watches()
	fs.inject(sim.Fault{Type: sim.FaultSplitWrites, Match: "watch", Resource: "pods"})
	fs.dropWatches(false)
	fs.awaitFired()
	reconnected(n)
	return fs.dealt
}

// faultSchedule deals faults to a simulator and counts them per kind, so a
// test can wait until each has fired: a request fault when the simulator
// applied it to a request (an error answered, a watch cut, a body split),
// which a fault that was queued, or taken by a request that ended first,
// has not; an action (drop watches, compact) when it was performed.
// Used by one goroutine.
type faultSchedule struct {
	t     *testing.T
	srv   *sim.Server
	dealt map[sim.FaultType]int64 // per kind, the firings asked for since the server was made
}

// inject queues request fault f, which fires Count times (0 means 1).
func (fs *faultSchedule) inject(f sim.Fault) {
	fs.t.Helper()
	require.GreaterOrEqual(fs.t, f.Count, 0, "a fault for every request until cleared has no count to wait for")
	require.NoError(fs.t, fs.srv.InjectFault(f))
	fs.dealt[f.Type] += int64(max(f.Count, 1))
}

func (fs *faultSchedule) dropWatches(loseHistory bool) {
	fs.srv.DropWatches(loseHistory)
	fs.dealt[sim.ActionDropWatches]++
}

func (fs *faultSchedule) compact() {
	fs.srv.Compact()
	fs.dealt[sim.ActionCompact]++
}

// awaitFired waits until every kind dealt has fired as often as it was
// dealt, and fails naming the kinds that fell short. It polls: the
// simulator announces no firing.
func (fs *faultSchedule) awaitFired() {
	fs.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		fired := fs.srv.FiredFaults()
		short := map[sim.FaultType]string{}
		for kind, n := range fs.dealt {
			if fired[kind] < n {
				short[kind] = fmt.Sprintf("dealt %d, fired %d", n, fired[kind])
			}
		}
		if len(short) == 0 {
			return
		}
		if time.Now().After(deadline) {
			fs.t.Fatalf("faults dealt but not fired within %s: %v (pending %v)", wait, short, fs.srv.Faults())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// deleteSome deletes n pods straight on the server.
func deleteSome(t *testing.T, srv *sim.Server, n int) {
	t.Helper()
	_, objs, err := srv.Snapshot("pods")
	require.NoError(t, err)
	for _, o := range objs {
		if n == 0 {
			return
		}
		if _, err := srv.Delete("pods", o.Namespace, o.Name); err == nil {
			n--
		}
	}
}

func serverPods(t *testing.T, srv *sim.Server) map[string]string {
	t.Helper()
	_, objs, err := srv.Snapshot("pods")
	require.NoError(t, err)
	want := make(map[string]string, len(objs))
	for k, o := range objs {
		want[k] = strconv.FormatUint(o.ResourceVersion, 10)
	}
	return want
}

// TestReplayAfterFaults checks the promise of the printed stream: applying
// its events in order ends with the server's state, through server
// restarts, cut streams, lost history (410 and relist) and deletes made
// while kwatch was disconnected.
func TestReplayAfterFaults(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	srv := h.Server
	journal, stopJournal := srv.Journal("pods")
	defer stopJournal()
	_, err := srv.LoadPods(150, 3, 7)
	require.NoError(t, err)
	p := start(t, testEnv(t), "pods", "-A", "-o", "json", "--output-watch-events", "--kubeconfig", h.Kubeconfig(t))
	rp := replay(p.stdout)
	rp.waitUntil(t, "initial list replayed", func(got map[string]string, _ map[string]int) bool { return len(got) == 150 })

	// The churn runs until every fault has fired: a watch fault fires only
	// on a watch that gets events.
	ctx, cancel := context.WithCancel(context.Background())
	churn, err := sim.NewChurn(srv, sim.ChurnOptions{Namespaces: 3, Rate: 200, Seed: 3})
	require.NoError(t, err)
	var churnErr error
	churnDone := make(chan struct{})
	go func() { defer close(churnDone); churnErr = churn.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-churnDone }) // also when the test fails first

	dealt := injectFaults(t, srv)
	require.Equal(t, dealt, srv.FiredFaults(), "every fault dealt fired as often as dealt, and nothing else fired")

	cancel()
	select {
	case <-churnDone:
		require.NoError(t, churnErr)
	case <-time.After(wait):
		t.Fatalf("churn did not stop within %s", wait)
	}
	require.Positive(t, churn.Events(), "the churn made changes")
	want := serverPods(t, srv)
	rp.waitUntil(t, "printed events replay to the server's state", func(got map[string]string, _ map[string]int) bool {
		return maps.Equal(got, want)
	})
	_, events, _ := rp.snapshot()
	require.Positive(t, events["DELETED"], "deletes were printed: %v", events)
	require.Positive(t, events["MODIFIED"], "changes were printed: %v", events)
	seq := rp.sequence()
	same := checkAgainstHistory(t, seq[:150], seq[150:], journal())
	require.Positive(t, same, "events printed as the server sent them")

	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	<-rp.ended
	require.Equal(t, 0, p.wait(), "stderr: %s", p.stderr.String())
	_, _, err = rp.snapshot()
	require.NoError(t, err, "the output stays a stream of whole JSON objects to the end")
}

// checkAgainstHistory compares a printed stream with the server's history
// under faults that make kwatch relist, where a relist prints a computed
// difference rather than the events missed: nothing printed is invented
// (each event after the initial list names an object at a resourceVersion
// the history has for it: the change itself, or for a relist's difference
// the state the object was in), and each object's events come in its
// history's order and make sense in turn (ADDED only for an object not
// shown, MODIFIED to a newer version, DELETED of a shown one: a live delete
// at the deletion's resourceVersion, a relist's at the last version
// printed). It returns how many events were printed as the history has
// them. The exact sequence is compared where no relist happens:
// TestPrintedEventsAreTheServers.
func checkAgainstHistory(t *testing.T, initial, got []printed, history []sim.Change) int {
	t.Helper()
	at := make(map[string]sim.Change, len(history))
	for _, c := range history {
		at[strconv.FormatUint(c.ResourceVersion, 10)] = c
	}
	shown := map[string]uint64{} // key -> resourceVersion last printed
	for _, p := range initial {
		shown[p.key] = rvOf(t, p)
	}
	same := 0
	for i, p := range got {
		c, ok := at[p.rv]
		require.True(t, ok && c.Namespace+"/"+c.Name == p.key, "printed event %d (%s) is no change the server made", i, p)
		if c.Type == p.typ {
			same++
		}
		rv := rvOf(t, p)
		last, had := shown[p.key]
		switch p.typ {
		case "ADDED":
			require.False(t, had, "printed event %d (%s): ADDED for an object shown at %d", i, p, last)
		case "MODIFIED":
			require.True(t, had && rv > last, "printed event %d (%s): MODIFIED of an object shown at %d (shown %v)", i, p, last, had)
		case "DELETED":
			require.True(t, had && rv >= last, "printed event %d (%s): DELETED of an object shown at %d (shown %v)", i, p, last, had)
		}
		if p.typ == "DELETED" {
			delete(shown, p.key)
		} else {
			shown[p.key] = rv
		}
	}
	return same
}

func rvOf(t *testing.T, p printed) uint64 {
	t.Helper()
	rv, err := strconv.ParseUint(p.rv, 10, 64)
	require.NoError(t, err, "printed event %s", p)
	return rv
}

// TestInterruptMidStream interrupts kwatch while changes pour in: the
// output ends with a whole JSON object and the status is 0.
func TestInterruptMidStream(t *testing.T) {
	p := start(t, testEnv(t), "pods", "--sim", "--sim-pods", "200", "--sim-rate", "400",
		"-o", "json", "--output-watch-events")
	rp := replay(p.stdout)
	rp.waitUntil(t, "changes after the initial list", func(_ map[string]string, events map[string]int) bool {
		return events["MODIFIED"] > 20
	})
	require.NoError(t, p.cmd.Process.Signal(os.Interrupt))
	<-rp.ended
	require.Equal(t, 0, p.wait(), "stderr: %s", p.stderr.String())
	_, _, err := rp.snapshot()
	require.NoError(t, err, "the output is a stream of whole JSON objects")
}
