package events

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/metrics/metricstest"
)

func TestEventIsWrittenAsClientGoWritesIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{Component: "rs-controller", Instance: "rs-controller-7d9f"})
		e.rec.Event(pod("web-1"), TypeNormal, "Created", "Created pod web-1")
		synctest.Wait()

		got := e.stored(t, "demo")
		require.Len(t, got, 1)
		ev := got[0]
		wantName := "web-1." + strconv.FormatInt(t0.UnixNano(), 16)
		if ev.Name != wantName {
			t.Errorf("metadata.name = %q, want %q (<object>.<hex Unix nanoseconds>)", ev.Name, wantName)
		}
		require.Equal(t, "demo", ev.Namespace)
		require.Equal(t, pod("web-1"), ev.InvolvedObject)
		require.Equal(t, "Created", ev.Reason)
		require.Equal(t, "Created pod web-1", ev.Message)
		require.Equal(t, TypeNormal, ev.Type)
		require.Equal(t, Source{Component: "rs-controller", Host: "rs-controller-7d9f"}, ev.Source)
		require.Equal(t, "rs-controller", ev.ReportingController)
		require.Equal(t, "rs-controller-7d9f", ev.ReportingInstance)
		require.Equal(t, int32(1), ev.Count)
		require.True(t, ev.FirstTimestamp.Time.Equal(t0), "firstTimestamp %v, want %v", ev.FirstTimestamp, t0)
		require.True(t, ev.LastTimestamp.Time.Equal(t0), "lastTimestamp %v, want %v", ev.LastTimestamp, t0)
		require.Equal(t, Stats{Created: 1}, e.rec.Stats())
	})
}

func TestRepeatsPatchCountAndLastTimestamp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{Window: 10 * time.Minute})
		for range 3 {
			e.rec.Event(pod("web-1"), TypeWarning, "BackOff", "Back-off restarting failed container")
			synctest.Wait()
			time.Sleep(time.Minute)
		}
		got := e.stored(t, "demo")
		require.Len(t, got, 1, "three repeats are one Event")
		require.Equal(t, int32(3), got[0].Count)
		require.True(t, got[0].FirstTimestamp.Time.Equal(t0), "firstTimestamp %v", got[0].FirstTimestamp)
		require.True(t, got[0].LastTimestamp.Time.Equal(t0.Add(2*time.Minute)), "lastTimestamp %v", got[0].LastTimestamp)
		require.Equal(t, Stats{Created: 1, Patched: 2}, e.rec.Stats())

		// Past the window after the last repeat, the same event starts anew.
		time.Sleep(10 * time.Minute)
		e.rec.Event(pod("web-1"), TypeWarning, "BackOff", "Back-off restarting failed container")
		synctest.Wait()
		got = e.stored(t, "demo")
		require.Len(t, got, 2)
		counts := []int32{got[0].Count, got[1].Count}
		slices.Sort(counts)
		require.Equal(t, []int32{1, 3}, counts)
	})
}

func TestAnyDifferenceIsANewEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{})
		e.rec.Event(pod("web-1"), TypeNormal, "Scaled", "to 3")
		e.rec.Event(pod("web-1"), TypeNormal, "Scaled", "to 5")  // message
		e.rec.Event(pod("web-1"), TypeWarning, "Scaled", "to 5") // type
		e.rec.Event(pod("web-1"), TypeNormal, "Resized", "to 5") // reason
		e.rec.Event(pod("web-2"), TypeNormal, "Scaled", "to 5")  // object
		e.rec.Event(pod("web-1"), TypeNormal, "Scaled", "to 3")  // a repeat of the first
		synctest.Wait()
		got := e.stored(t, "demo")
		require.Len(t, got, 5)
		names := map[string]bool{}
		for _, ev := range got {
			names[ev.Name] = true
		}
		require.Len(t, names, 5, "names are unique even within one instant")
		require.Equal(t, Stats{Created: 5, Patched: 1}, e.rec.Stats())
	})
}

func TestRateLimitIsPerObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{Burst: 3, Refill: time.Minute})
		for i := range 5 {
			e.rec.Eventf(pod("noisy"), TypeWarning, "Failed", "attempt %d", i)
		}
		e.rec.Event(pod("quiet"), TypeNormal, "Synced", "ok")
		synctest.Wait()
		require.Equal(t, Stats{Created: 4, RateLimited: 2}, e.rec.Stats())

		time.Sleep(time.Minute) // one more token for noisy
		e.rec.Event(pod("noisy"), TypeWarning, "Failed", "attempt 5")
		e.rec.Event(pod("noisy"), TypeWarning, "Failed", "attempt 6")
		synctest.Wait()
		require.Equal(t, Stats{Created: 5, RateLimited: 3}, e.rec.Stats())
		require.Len(t, e.stored(t, "demo"), 5)
	})
}

func TestFullQueueDropsWithoutBlocking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newEnv(t, Options{}).client // a server to build a recorder for; this one never runs
		rec, err := New(Options{Client: c, QueueSize: 2})
		require.NoError(t, err)
		for i := range 5 {
			rec.Eventf(pod("web-1"), TypeNormal, "Tick", "tick %d", i) // returns at once: nothing drains the queue
		}
		require.Equal(t, Stats{Dropped: 3}, rec.Stats())

		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() { ran <- rec.Run(ctx) }()
		synctest.Wait()
		require.Equal(t, Stats{Dropped: 3, Created: 2}, rec.Stats(), "a later Run writes what was queued")
		cancel()
		require.NoError(t, <-ran)
	})
}

func TestRepeatOfADeletedEventCreatesItAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{})
		e.rec.Event(pod("web-1"), TypeNormal, "Pulled", "image pulled")
		synctest.Wait()
		first := e.stored(t, "demo")
		require.Len(t, first, 1)
		require.NoError(t, e.events.Delete(context.Background(), "demo", first[0].Name, client.DeleteOptions{}))

		time.Sleep(time.Second)
		e.rec.Event(pod("web-1"), TypeNormal, "Pulled", "image pulled")
		synctest.Wait()
		got := e.stored(t, "demo")
		require.Len(t, got, 1)
		require.Equal(t, first[0].Name, got[0].Name, "created again under its name")
		require.Equal(t, int32(2), got[0].Count, "with the count so far")
		require.True(t, got[0].FirstTimestamp.Time.Equal(t0))
		require.Equal(t, Stats{Created: 2}, e.rec.Stats())
	})
}

func TestClusterScopedObjectsEventsGoToDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{})
		node := ObjectReference{Kind: "Node", APIVersion: "v1", Name: "node-1", UID: "n1"}
		e.rec.Event(node, TypeWarning, "NodeNotReady", "Node node-1 status is now: NodeNotReady")
		synctest.Wait()
		got := e.stored(t, metav1.NamespaceDefault)
		require.Len(t, got, 1)
		require.Equal(t, node, got[0].InvolvedObject)
	})
}

func TestTypedObjectsAndRef(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{})
		withKind := &Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "other", UID: "u1", ResourceVersion: "3"}}
		e.rec.Event(withKind, TypeNormal, "Seen", "an object with its kind")
		// A slim type without TypeMeta names its kind through Ref.
		slim := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web-1", UID: "u2"}}
		e.rec.Event(Ref(configMaps, slim), TypeNormal, "Seen", "a ref")
		synctest.Wait()
		refs := map[string]ObjectReference{}
		for _, ev := range e.stored(t, "demo") {
			refs[ev.InvolvedObject.Name] = ev.InvolvedObject
		}
		require.Equal(t, ObjectReference{Kind: "Event", APIVersion: "v1", Namespace: "demo", Name: "other", UID: "u1", ResourceVersion: "3"}, refs["other"])
		require.Equal(t, ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: "demo", Name: "web-1", UID: "u2"}, refs["web-1"])
	})
}

func TestInvalidEventsAreCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{})
		e.rec.Event(pod("web-1"), "Error", "R", "not a type the server knows")
		e.rec.Event(ObjectReference{Kind: "Pod", Namespace: "demo"}, TypeNormal, "R", "no name")
		e.rec.Event(nil, TypeNormal, "R", "no object")
		synctest.Wait()
		require.Equal(t, Stats{Invalid: 3}, e.rec.Stats())
		require.Empty(t, e.stored(t, "demo"))
	})
}

func TestFailedWritesAreCountedAndForgotten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{})
		tr := e.net.Transport()
		defer tr.CloseIdleConnections()
		c, err := kube.NewClient(&kube.Config{Host: "http://nowhere:80", HTTP: kube.HTTPConfig{Transport: tr}}) // nothing listens there
		require.NoError(t, err)
		rec, err := New(Options{Client: c, Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan error, 1)
		go func() { ran <- rec.Run(ctx) }()
		rec.Event(pod("web-1"), TypeNormal, "R", "m")
		rec.Event(pod("web-1"), TypeNormal, "R", "m") // not a repeat: the first was never stored
		synctest.Wait()
		require.Equal(t, Stats{Failed: 2}, rec.Stats())
		cancel()
		require.NoError(t, <-ran)
	})
}

func TestMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := metrics.NewSet()
		e := newEnv(t, Options{Component: "ctl", Metrics: reg, Burst: 1})
		e.rec.Event(pod("web-1"), TypeNormal, "A", "m")
		e.rec.Event(pod("web-1"), TypeNormal, "A", "m") // rate limited: burst 1
		e.rec.Event(pod("web-1"), "Bad", "A", "m")
		synctest.Wait()
		m := metricstest.Scrape(t, reg)
		require.NoError(t, reg.Err())
		for result, want := range map[string]float64{"created": 1, "patched": 0, "rate_limited": 1, "invalid": 1, "dropped": 0, "failed": 0} {
			key := fmt.Sprintf(`%s{name="ctl",result="%s"}`, MetricEvents, result)
			if got, ok := m[key]; !ok || got != want {
				t.Errorf("%s = %v (present %v), want %v", key, got, ok, want)
			}
		}
		require.Equal(t, 0.0, m[MetricQueueDepth+`{name="ctl"}`])
	})
}

func TestRunTwiceIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{})
		synctest.Wait()
		require.ErrorContains(t, e.rec.Run(context.Background()), "already running")
	})
}

func TestNewRefusesBadOptions(t *testing.T) {
	_, err := New(Options{})
	require.ErrorContains(t, err, "Options.Client")
	synctest.Test(t, func(t *testing.T) {
		c := newEnv(t, Options{}).client
		_, err := New(Options{Client: c, Burst: -1})
		require.ErrorContains(t, err, "Options.Burst")
	})
}

func TestFailedPatchIsMadeUpByTheNext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, Options{Logger: slog.New(slog.DiscardHandler)})
		e.rec.Event(pod("web-1"), TypeNormal, "Pulled", "image pulled")
		synctest.Wait()
		require.NoError(t, e.srv.InjectFault(sim.Fault{Type: sim.FaultError, Code: 500, Match: "write", Resource: "events"}))
		e.rec.Event(pod("web-1"), TypeNormal, "Pulled", "image pulled") // its patch gets the 500
		synctest.Wait()
		require.Equal(t, int64(1), e.srv.Stats().FaultsFired[sim.FaultError], "the fault must have fired")
		require.Equal(t, Stats{Created: 1, Failed: 1}, e.rec.Stats())
		e.rec.Event(pod("web-1"), TypeNormal, "Pulled", "image pulled")
		synctest.Wait()
		got := e.stored(t, "demo")
		require.Len(t, got, 1, "the failed patch did not start a new Event")
		require.Equal(t, int32(3), got[0].Count, "the next patch counts the occurrence whose patch failed")
		require.Equal(t, Stats{Created: 1, Patched: 1, Failed: 1}, e.rec.Stats())
	})
}
