package informer

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// relistRecorder is a recorderT that tells relist updates apart.
type relistRecorder struct{ *recorderT }

func (r relistRecorder) OnRelistUpdate(old, new *testPod) {
	r.log("relist-update " + key(new) + "@" + old.ResourceVersion + "->" + new.ResourceVersion)
}

// TestRelistUpdatesAreTold: a handler that implements RelistUpdater gets
// the updates a relist computed through OnRelistUpdate, and the watch's
// through OnUpdate, with both delivery modes.
func TestRelistUpdatesAreTold(t *testing.T) {
	for _, d := range []Delivery{Coalesce, Ordered} {
		rec := &recorderT{}
		s := newScripted(t,
			answer(200, listJSON("10", "", podJSON("a", "5"), podJSON("b", "6"))),
			when(rec.count(2), stream(true, eventJSON("MODIFIED", podJSON("a", "20")), bookmarkJSON("25", false),
				eventJSON("ERROR", statusJSON(410, "Expired")))),
			when(rec.count(3), answer(200, listJSON("40", "", podJSON("a", "30"), podJSON("b", "6")))),
			stream(false),
		)
		inf, err := New(fastOptions(s.srv.URL, t, ListPaged))
		require.NoError(t, err)
		_, err = inf.AddHandler(relistRecorder{rec}, HandlerOptions{Delivery: d})
		require.NoError(t, err)
		start(t, inf)
		require.Eventually(t, func() bool { return len(rec.get()) == 4 }, waitLong, tick)
		require.Equal(t, []string{"update ns/a@5->20", "relist-update ns/a@20->30"}, rec.get()[2:], "delivery %d", d)
	}
}

// TestRelistUpdateMergesIntoRelisted: a coalesced update that a relist
// computed part of is told as a relist update; HandlerFuncs without a
// RelistUpdateFunc passes it to UpdateFunc.
func TestRelistUpdateMergesIntoRelisted(t *testing.T) {
	o := func(name, rv string) *obj { return &obj{name, rv} }
	var got []string
	h := HandlerFuncs[*obj]{
		UpdateFunc:       func(old, new *obj) { got = append(got, "update "+old.rv+"->"+new.rv) },
		RelistUpdateFunc: func(old, new *obj) { got = append(got, "relist "+old.rv+"->"+new.rv) },
	}
	q := newHandlerQueue[*obj](h, false, slog.Default())
	q.update("a", o("a", "1"), o("a", "2"))
	q.relistUpdate("a", o("a", "2"), o("a", "3"))
	q.update("b", o("b", "1"), o("b", "2"))
	for {
		p, ok := q.pop()
		if !ok {
			break
		}
		deliver[*obj](h, p, slog.Default(), &q.panics)
	}
	require.Equal(t, []string{"relist 1->3", "update 1->2"}, got)

	got = nil
	HandlerFuncs[*obj]{UpdateFunc: h.UpdateFunc}.OnRelistUpdate(o("a", "1"), o("a", "2"))
	require.Equal(t, []string{"update 1->2"}, got)
}
