package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/live"
	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
	"github.com/kwatch/kwatch/informer"
)

func TestLiveFlag(t *testing.T) {
	o, err := parseGetArgs([]string{"pods", "--live", "-A"}, &env{})
	require.NoError(t, err)
	require.True(t, o.live.enabled)
	o, err = parseGetArgs([]string{"pods"}, &env{})
	require.NoError(t, err)
	require.False(t, o.live.enabled, "off by default")
}

func TestLiveNeedsATerminalAndATable(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"pods", "--sim", "--live"}, "--live needs a terminal, and stdout is not one"},
		{[]string{"pods", "--sim", "--live", "-o", "json"}, "--live needs a terminal"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tc.args, &out, &errb)
			require.Equal(t, exitUsage, code, "stderr: %s", errb.String())
			require.Empty(t, out.String())
			require.Equal(t, 1, strings.Count(errb.String(), "\n"), "one line: %q", errb.String())
			require.Contains(t, errb.String(), tc.want)
		})
	}

	tty := &env{outTTY: true}
	for _, tc := range []struct {
		o    getOptions
		want string
	}{
		{getOptions{watch: true, format: formatJSON, output: "json"}, "--live shows a table: it takes no -o json"},
		{getOptions{watch: true, watchEvents: true}, "--output-watch-events"},
		{getOptions{watch: false}, "--live watches"},
	} {
		err := checkLive(tty, &tc.o)
		require.ErrorContains(t, err, tc.want)
		require.True(t, isUsage(err))
	}
	require.NoError(t, checkLive(tty, &getOptions{watch: true, format: formatWide}))
}

func TestConnTracker(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	refused := errors.New("dial tcp: connection\nrefused")
	steps := []struct {
		now   int
		h     informer.Health
		s     informer.Stats
		want  live.ConnState
		since int // -1: zero
	}{
		{0, informer.Health{}, informer.Stats{}, live.Connecting, -1},
		{1, informer.Health{LastActivity: at(1)}, informer.Stats{Listed: 500}, live.Listing, -1},
		{2, informer.Health{Synced: true, Watching: true, LastActivity: at(2)}, informer.Stats{Listed: 900, Relists: 1}, live.Watching, 2},
		{3, informer.Health{Synced: true, Watching: true}, informer.Stats{Listed: 900, Relists: 1}, live.Watching, 2},
		// The watch ended and is being reopened: routine, still watching.
		{4, informer.Health{Synced: true}, informer.Stats{Listed: 900, Relists: 1}, live.Watching, 2},
		{5, informer.Health{Synced: true, Watching: true}, informer.Stats{Listed: 900, Relists: 1}, live.Watching, 5},
		// Down with an error: reconnecting since the watch closed.
		{6, informer.Health{Synced: true, LastError: refused}, informer.Stats{Listed: 900, Relists: 1}, live.Reconnecting, 6},
		{20, informer.Health{Synced: true, LastError: refused}, informer.Stats{Listed: 900, Relists: 1}, live.Reconnecting, 6},
		// A list moves while the watch is down: a relist.
		{21, informer.Health{Synced: true}, informer.Stats{Listed: 40, Relists: 1}, live.Relisting, 6},
		{22, informer.Health{Synced: true}, informer.Stats{Listed: 900, Relists: 2}, live.Relisting, 6},
		{23, informer.Health{Synced: true, Watching: true}, informer.Stats{Listed: 900, Relists: 2}, live.Watching, 23},
		// Down for longer than reconnectNotice without an error.
		{24, informer.Health{Synced: true}, informer.Stats{Listed: 900, Relists: 2}, live.Watching, 23},
		{30, informer.Health{Synced: true}, informer.Stats{Listed: 900, Relists: 2}, live.Reconnecting, 24},
	}
	var ct connTracker
	for _, st := range steps {
		c := ct.next(st.h, st.s, at(st.now))
		require.Equal(t, st.want, c.State, "at %ds", st.now)
		if st.since < 0 {
			require.True(t, c.Since.IsZero(), "at %ds: since %v", st.now, c.Since)
		} else {
			require.Equal(t, at(st.since), c.Since, "at %ds", st.now)
		}
		require.Equal(t, st.s.Listed, c.Listed)
		require.Equal(t, max(st.s.Relists-1, 0), c.Relists, "the first list is not a relist")
		if st.h.LastError != nil {
			require.Equal(t, "dial tcp: connection refused", c.LastError, "one line")
		}
	}
	c := ct.next(informer.Health{Synced: true, Watching: true, LastRefusal: errors.New("no\nkey")},
		informer.Stats{StoreErrors: 2, TransformErrors: 1}, at(40))
	require.Equal(t, int64(3), c.Refused)
	require.Equal(t, "no key", c.LastRefusal)
}

// serverRow is a pod's row of a server Table.
func serverRow(ns, name, status string, created time.Time, cols []printers.Column) *printers.ServerRow {
	r := &printers.ServerRow{Cells: []string{name, "1/1", status, "0", "5m", "10.0.0.1"}, Columns: cols}
	r.Name, r.Namespace, r.CreationTimestamp = name, ns, created
	return r
}

var podColumns = []printers.Column{{Name: "Name"}, {Name: "Ready"}, {Name: "Status"}, {Name: "Restarts"},
	{Name: "Age"}, {Name: "IP", Priority: 1}}

func TestLiveTable(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	now := t0.Add(time.Hour)
	m := live.NewModel(live.Options{Resource: "pods", Namespaced: true})
	lt := &liveTable{}
	// The initial list in no order: rows before the one with columns wait.
	lt.upsert(m, serverRow("b", "web-2", "Pending", t0, nil), true)
	lt.upsert(m, serverRow("a", "gone", "Running", t0, nil), true)
	require.Equal(t, 0, m.Len(), "no columns yet")
	lt.delete(m, serverRow("a", "gone", "", t0, nil))
	lt.upsert(m, serverRow("a", "web-1", "CrashLoopBackOff", t0, podColumns), true)
	require.Equal(t, []string{"a/web-1", "b/web-2"}, m.Keys(now))
	f := m.Render(now, 80, 8)
	require.Regexp(t, `^NAMESPACE +NAME +READY +STATUS +RESTARTS +AGE$`, f.Lines[3].String(), "priority-1 columns only with wide")
	require.Regexp(t, `^a +web-1 +1/1 +CrashLoopBackOff +0 +60m$`, f.Lines[4].String(), "AGE ticks from the creation time")
	counts, _ := m.Counts(now)
	require.Equal(t, []live.StatusCount{{Status: "CrashLoopBackOff", N: 1}, {Status: "Pending", N: 1}}, counts)

	lt.upsert(m, serverRow("b", "web-2", "Running", t0, nil), false)
	counts, _ = m.Counts(now)
	require.Equal(t, []live.StatusCount{{Status: "CrashLoopBackOff", N: 1}, {Status: "Running", N: 1}}, counts)

	wide := &liveTable{wide: true}
	wm := live.NewModel(live.Options{Resource: "pods"})
	wide.upsert(wm, serverRow("a", "x", "Running", t0, podColumns), false)
	require.Regexp(t, `^NAME +READY +STATUS +RESTARTS +AGE +IP$`, wm.Render(now, 80, 8).Lines[3].String())

	// A server without Tables: NAME and AGE from the object.
	fb := &liveTable{}
	fm := live.NewModel(live.Options{Resource: "widgets"})
	obj := &printers.ServerRow{Fallback: true}
	obj.Name, obj.CreationTimestamp = "w1", t0
	fb.upsert(fm, obj, true)
	f = fm.Render(now, 80, 8)
	require.Regexp(t, `^NAME +AGE$`, f.Lines[3].String())
	require.Regexp(t, `^w1 +60m$`, f.Lines[4].String())

	// A change before any columns (a server that never sent them): cells
	// named by position rather than lost.
	nc := &liveTable{}
	nm := live.NewModel(live.Options{Resource: "things"})
	nc.upsert(nm, &printers.ServerRow{Cells: []string{"a", "b"}}, false)
	require.Regexp(t, `^COLUMN 1 +COLUMN 2$`, nm.Render(now, 80, 8).Lines[3].String())
}

func TestLiveHandlerStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	updates := make(chan live.Update)
	h := (&liveTable{}).handler(ctx, updates)
	got := make(chan live.Update)
	go func() { got <- <-updates }()
	h.OnAdd(serverRow("a", "x", "Running", time.Time{}, podColumns), false) // the view takes it
	m := live.NewModel(live.Options{Resource: "pods"})
	(<-got)(m)
	require.Equal(t, 1, m.Len())
	cancel()
	h.OnDelete(serverRow("a", "x", "Running", time.Time{}, nil), false) // nobody reads: the context ends the wait
}

// TestLiveTableChanges: a change marks the cells that changed, stamped by
// the view's clock (injected here), and adds the fields it changed to the
// object's history, which Enter shows.
func TestLiveTableChanges(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	m := live.NewModel(live.Options{Resource: "pods"})
	lt := &liveTable{now: func() time.Time { return t1 }}
	old := serverRow("a", "web-1", "Pending", t0, podColumns)
	old.Object = []byte(`{"metadata":{"name":"web-1","resourceVersion":"1"},"status":{"phase":"Pending"}}`)
	lt.upsert(m, old, true)
	cur := serverRow("a", "web-1", "Running", t0, nil)
	cur.Object = []byte(`{"metadata":{"name":"web-1","resourceVersion":"2"},"status":{"phase":"Running"}}`)
	lt.update(m, old, cur, "MODIFIED")

	styleOf := func(now time.Time, text string) live.Style {
		for _, sp := range m.Render(now, 80, 8).Lines[4] {
			if strings.TrimSpace(sp.Text) == text {
				return sp.Style
			}
		}
		t.Fatalf("no span %q in %v", text, m.Render(now, 80, 8).Lines[4])
		return 0
	}
	require.Equal(t, live.StyleChangedCell, styleOf(t1.Add(time.Second), "Running"), "the changed cell is marked")
	require.Equal(t, live.StyleChanged, styleOf(t1.Add(time.Second), "web-1"), "the rest of the row is bold")
	require.Equal(t, live.StyleGood, styleOf(t1.Add(time.Minute), "Running"), "a minute later, by the view's clock, no longer")

	m.HandleKey(live.Key{Code: live.KeyEnter})
	pane := m.Render(t1, 80, 10).String()
	require.Contains(t, pane, "CHANGES OF a/web-1\n13:00:00  MODIFIED\n    status.phase: Pending → Running\n", "noise (resourceVersion) left out")

	for i := range historyLen + 5 {
		lt.update(m, cur, cur, fmt.Sprint("MODIFIED ", i))
	}
	require.Len(t, lt.history["a/web-1"], historyLen, "the history is bounded")
	lt.delete(m, cur)
	require.Empty(t, lt.history, "a deleted object's history goes")
}
