package suite

import (
	"context"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/events"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// The events cases drive kwatch's event recorder (package events) and
// check what the server stored, read back as k8s.io/api's typed Events:
// the fields client-go's recorder writes, a repeat's count and
// lastTimestamp patch, an event about a cluster-scoped object in
// "default", a repeat of a deleted Event created again, and the name of an
// event about an object whose own name is no DNS subdomain.
func eventsCases() []Case {
	return []Case{
		{Name: "events/recorder-writes-and-aggregates", Run: testEventsRecorder},
	}
}

// recorderFor starts a recorder on the admin client; its Run ends with the case.
func recorderFor(t T, e *Env, opts events.Options) *events.Recorder {
	opts.Client = e.Admin
	rec, err := events.New(opts)
	require.NoError(t, err)
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(e.Ctx)
	go func() { done <- rec.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return rec
}

// waitStats waits until the recorder has written what want counts.
func waitStats(t T, e *Env, rec *events.Recorder, want events.Stats) {
	t.Helper()
	eventually(t, e, time.Minute, "the recorder's writes", func() bool { return rec.Stats() == want })
}

func testEventsRecorder(t T, e *Env) {
	cms := client.For(e.Admin, kube.Typed[*corev1.ConfigMap](configMapsRes), client.Options{})
	cm, err := cms.Create(e.Ctx, newConfigMap(e.NS, "subject", nil), client.CreateOptions{})
	require.NoError(t, err)
	rec := recorderFor(t, e, events.Options{Component: "kwatch-conformance", Instance: "conformance-0"})
	ref := events.Ref(kube.Typed[*corev1.ConfigMap](configMapsRes), cm)

	start := time.Now().Truncate(time.Second)
	rec.Event(ref, events.TypeNormal, "Synced", "synced the subject")
	waitStats(t, e, rec, events.Stats{Created: 1})
	time.Sleep(1100 * time.Millisecond) // lastTimestamp has second precision: make the repeats' visible
	rec.Event(ref, events.TypeNormal, "Synced", "synced the subject")
	rec.Event(ref, events.TypeNormal, "Synced", "synced the subject")
	rec.Eventf(ref, events.TypeWarning, "Failed", "could not sync: %s", "quota exceeded")
	waitStats(t, e, rec, events.Stats{Created: 2, Patched: 2})

	evs := client.For(e.Admin, kube.Typed[*corev1.Event](kube.Events), client.Options{})
	byReason := storedEvents(t, e, evs, e.NS)
	require.Len(t, byReason, 2, "a repeat is not a new Event")
	synced := byReason["Synced"]
	require.True(t, strings.HasPrefix(synced.Name, "subject."), "name %q is <object>.<hex>", synced.Name)
	require.Equal(t, corev1.ObjectReference{Kind: "ConfigMap", APIVersion: "v1", Namespace: e.NS, Name: "subject",
		UID: cm.UID, ResourceVersion: cm.ResourceVersion}, synced.InvolvedObject)
	require.Equal(t, corev1.EventTypeNormal, synced.Type)
	require.Equal(t, "synced the subject", synced.Message)
	require.Equal(t, corev1.EventSource{Component: "kwatch-conformance", Host: "conformance-0"}, synced.Source)
	require.Equal(t, "kwatch-conformance", synced.ReportingController)
	require.Equal(t, "conformance-0", synced.ReportingInstance)
	require.Equal(t, int32(3), synced.Count, "two repeats patched the count")
	require.False(t, synced.FirstTimestamp.Time.Before(start), "firstTimestamp %v before the case started (%v)", synced.FirstTimestamp, start)
	require.True(t, synced.LastTimestamp.Time.After(synced.FirstTimestamp.Time),
		"lastTimestamp %v moved past firstTimestamp %v", synced.LastTimestamp, synced.FirstTimestamp)
	failed := byReason["Failed"]
	require.Equal(t, corev1.EventTypeWarning, failed.Type)
	require.Equal(t, "could not sync: quota exceeded", failed.Message)
	require.Equal(t, int32(1), failed.Count)
	require.True(t, failed.FirstTimestamp.Equal(&failed.LastTimestamp))

	// A repeat of an Event the server no longer has creates it again,
	// under its name, with the count so far.
	require.NoError(t, evs.Delete(e.Ctx, e.NS, synced.Name, client.DeleteOptions{}))
	rec.Event(ref, events.TypeNormal, "Synced", "synced the subject")
	waitStats(t, e, rec, events.Stats{Created: 3, Patched: 2})
	again, err := evs.Get(e.Ctx, e.NS, synced.Name, client.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, int32(4), again.Count)
	require.True(t, again.FirstTimestamp.Equal(&synced.FirstTimestamp), "firstTimestamp kept: %v, was %v", again.FirstTimestamp, synced.FirstTimestamp)

	// An event about a cluster-scoped object (the case's namespace) goes
	// to "default", where client-go puts it.
	nsRef := events.ObjectReference{Kind: "Namespace", APIVersion: "v1", Name: e.NS}
	rec.Event(nsRef, events.TypeNormal, "Checked", "namespace checked")
	waitStats(t, e, rec, events.Stats{Created: 4, Patched: 2})
	var inDefault *corev1.Event
	for _, ev := range listEvents(t, e, evs, metav1.NamespaceDefault) {
		if ev.InvolvedObject.Kind == "Namespace" && ev.InvolvedObject.Name == e.NS {
			inDefault = ev
		}
	}
	require.NotNil(t, inDefault, "no event about namespace %s in default", e.NS)
	t.Cleanup(func() { _ = evs.Delete(e.Ctx, metav1.NamespaceDefault, inDefault.Name, client.DeleteOptions{}) })
	require.Equal(t, "", inDefault.InvolvedObject.Namespace)
	require.Equal(t, "namespace checked", inDefault.Message)
	require.Equal(t, int32(1), inDefault.Count)

	// An object whose name is no DNS subdomain (a ClusterRole's "system:..."):
	// the Event's name is made one, so the server takes it.
	roleRef := events.ObjectReference{Kind: "ClusterRole", APIVersion: "rbac.authorization.k8s.io/v1", Name: "system:kwatch:" + e.NS}
	rec.Event(roleRef, events.TypeNormal, "Checked", "role checked")
	waitStats(t, e, rec, events.Stats{Created: 5, Patched: 2})
	var aboutRole *corev1.Event
	for _, ev := range listEvents(t, e, evs, metav1.NamespaceDefault) {
		if ev.InvolvedObject.Name == roleRef.Name {
			aboutRole = ev
		}
	}
	require.NotNil(t, aboutRole, "no event about %s in default", roleRef.Name)
	t.Cleanup(func() { _ = evs.Delete(e.Ctx, metav1.NamespaceDefault, aboutRole.Name, client.DeleteOptions{}) })
	require.True(t, strings.HasPrefix(aboutRole.Name, "system-kwatch-"+e.NS+"."), "name %q", aboutRole.Name)
	require.Equal(t, "ClusterRole", aboutRole.InvolvedObject.Kind)
}

// listEvents lists the Events of ns.
func listEvents(t T, e *Env, evs *client.Client[*corev1.Event], ns string) []*corev1.Event {
	t.Helper()
	page, err := evs.List(e.Ctx, kube.Scope{Namespace: ns}, watch.ListOptions{})
	require.NoError(t, err)
	return page.Items
}

// storedEvents lists the Events of ns by reason, failing on two with one reason.
func storedEvents(t T, e *Env, evs *client.Client[*corev1.Event], ns string) map[string]*corev1.Event {
	t.Helper()
	out := map[string]*corev1.Event{}
	for _, ev := range listEvents(t, e, evs, ns) {
		require.NotContains(t, out, ev.Reason, "two Events with reason %s", ev.Reason)
		out[ev.Reason] = ev
	}
	return out
}
