package live

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// pod is a row of a NAME, STATUS, AGE table created at created.
func pod(ns, name, status string, created time.Time) Row {
	return Row{Key: ns + "/" + name, Namespace: ns, Name: name, Status: status,
		Cells: func(now time.Time) []string { return []string{name, status, human(now.Sub(created))} }}
}

func podModel(rows ...Row) *Model {
	m := NewModel(Options{Resource: "pods", Columns: []string{"NAME", "STATUS", "AGE"}, Namespaced: true,
		Scope: "all namespaces"})
	for _, r := range rows {
		m.Upsert(r)
	}
	return m
}

func keys(m *Model, ks ...Key) {
	for _, k := range ks {
		m.HandleKey(k)
	}
}

func typed(s string) []Key {
	var ks []Key
	for _, r := range s {
		ks = append(ks, R(r))
	}
	return ks
}

func TestModelSortsByNamespaceThenName(t *testing.T) {
	m := podModel(pod("b", "web-2", "Running", t0), pod("a", "z", "Running", t0), pod("b", "web-1", "Pending", t0),
		pod("a", "b", "Running", t0))
	require.Equal(t, []string{"a/b", "a/z", "b/web-1", "b/web-2"}, m.Keys(t0))

	m.Upsert(pod("b", "web-1", "Running", t0)) // a replacement keeps one row, in place
	m.Delete("a/z")
	m.Delete("a/none")
	require.Equal(t, []string{"a/b", "b/web-1", "b/web-2"}, m.Keys(t0))
	require.Equal(t, 3, m.Len())
	require.Equal(t, []string{"a", "b"}, m.Namespaces())
	m.Delete("a/b")
	require.Equal(t, []string{"b"}, m.Namespaces(), "a namespace without rows leaves the picker")
}

func TestModelFilter(t *testing.T) {
	m := podModel(pod("shop", "web-1", "Running", t0), pod("shop", "db-0", "CrashLoopBackOff", t0),
		pod("auth", "web-9", "Pending", t0))
	tests := []struct {
		name string
		keys []Key
		want []string
	}{
		{"no filter", nil, []string{"auth/web-9", "shop/db-0", "shop/web-1"}},
		{"name, typed live", append([]Key{R('/')}, typed("web")...), []string{"auth/web-9", "shop/web-1"}},
		{"any cell, ignoring case", append([]Key{R('/')}, typed("crashloop")...), []string{"shop/db-0"}},
		{"namespace", append([]Key{R('/')}, typed("AUTH")...), []string{"auth/web-9"}},
		{"backspace widens", append(append([]Key{R('/')}, typed("web-9")...), Key{Code: KeyBackspace}),
			[]string{"auth/web-9", "shop/web-1"}},
		{"enter keeps it", append(append([]Key{R('/')}, typed("db")...), Key{Code: KeyEnter}), []string{"shop/db-0"}},
		{"esc while typing clears", append(append([]Key{R('/')}, typed("db")...), Key{Code: KeyEsc}),
			[]string{"auth/web-9", "shop/db-0", "shop/web-1"}},
		{"esc after enter clears", append(append([]Key{R('/')}, typed("db")...), Key{Code: KeyEnter}, Key{Code: KeyEsc}),
			[]string{"auth/web-9", "shop/db-0", "shop/web-1"}},
		{"ctrl-u erases", append(append([]Key{R('/')}, typed("db")...), Key{Code: KeyCtrlU}),
			[]string{"auth/web-9", "shop/db-0", "shop/web-1"}},
		{"nothing matches", append([]Key{R('/')}, typed("nope")...), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			keys(m, Key{Code: KeyEsc}, Key{Code: KeyEsc}) // back to the table, nothing filtered
			keys(m, tc.keys...)
			require.Equal(t, tc.want, m.Keys(t0))
		})
	}
}

func TestModelFilterKeysAreText(t *testing.T) {
	m := podModel(pod("a", "quota-q", "Running", t0), pod("a", "x", "Running", t0))
	require.False(t, m.HandleKey(R('/')))
	for _, k := range typed("q n/") {
		require.False(t, m.HandleKey(k), "%q is text while typing a filter", k.Rune)
	}
	require.Equal(t, "q n/", m.Filter())
	require.True(t, m.HandleKey(Key{Code: KeyCtrlC}), "Ctrl-C quits while typing")
}

func TestModelCounts(t *testing.T) {
	m := podModel(pod("a", "1", "Running", t0), pod("a", "2", "Running", t0), pod("a", "3", "Pending", t0),
		pod("b", "4", "Running", t0), pod("b", "5", "Error", t0), pod("b", "6", "Completed", t0))
	counts, shown := m.Counts(t0)
	require.Equal(t, 6, shown)
	require.Equal(t, []StatusCount{{"Running", 3}, {"Completed", 1}, {"Error", 1}, {"Pending", 1}}, counts,
		"most frequent first, then by name")

	keys(m, append([]Key{R('/')}, typed("b")...)...) // namespace b (and no row of a has a b)
	counts, shown = m.Counts(t0)
	require.Equal(t, 3, shown)
	require.Equal(t, []StatusCount{{"Completed", 1}, {"Error", 1}, {"Running", 1}}, counts, "counts follow the filter")
}

func TestModelNamespacePick(t *testing.T) {
	m := podModel(pod("b", "2", "Running", t0), pod("a", "1", "Running", t0), pod("b", "3", "Running", t0))
	keys(m, R('n'))
	f := m.Render(t0, 60, 10)
	require.Equal(t, "NAMESPACE", strings.TrimSpace(f.Lines[3].String()))
	require.Equal(t, "▸ all namespaces (3)", f.Lines[4].String())
	require.Equal(t, "  a (1)", f.Lines[5].String())
	require.Equal(t, "  b (2)", f.Lines[6].String())

	keys(m, Key{Code: KeyDown}, R('j'), R('j'), Key{Code: KeyEnter}) // moving past the end stays on b
	require.Equal(t, "b", m.Namespace())
	require.Equal(t, []string{"b/2", "b/3"}, m.Keys(t0))
	f = m.Render(t0, 60, 10)
	require.Regexp(t, `^NAME +STATUS +AGE$`, f.Lines[3].String(), "one namespace: no NAMESPACE column")
	require.Contains(t, f.Lines[0].String(), "namespace b")

	keys(m, R('n'))
	require.Equal(t, "▸ b (2)", m.Render(t0, 60, 10).Lines[6].String(), "the picker opens on the namespace shown")
	keys(m, Key{Code: KeyEsc})
	require.Equal(t, "b", m.Namespace(), "Esc leaves the picker without a change")
	keys(m, R('n'), Key{Code: KeyHome}, Key{Code: KeyEnter})
	require.Equal(t, "", m.Namespace(), "the first line is every namespace")

	keys(m, R('n'), Key{Code: KeyEnd}, Key{Code: KeyEnter}, Key{Code: KeyEsc})
	require.Equal(t, "", m.Namespace(), "Esc in the table shows every namespace again")
	require.True(t, m.HandleKey(R('q')))
}

func TestModelNamespacePickNeedsNamespaces(t *testing.T) {
	m := NewModel(Options{Resource: "nodes", Columns: []string{"NAME"}})
	m.Upsert(Row{Key: "n1", Name: "n1", Cells: func(time.Time) []string { return []string{"n1"} }})
	keys(m, R('n'))
	f := m.Render(t0, 80, 8)
	require.Regexp(t, `^NAME$`, f.Lines[3].String(), "n does nothing for cluster-scoped rows")
	require.Equal(t, "/ filter · s sort · ↑↓ move · Enter changes · q quit", f.Lines[7].String(), "and is not offered")
}

func TestModelAgesTickWithTheClock(t *testing.T) {
	calls := 0
	m := podModel(Row{Key: "a/x", Namespace: "a", Name: "x", Cells: func(now time.Time) []string {
		calls++
		return []string{"x", "", human(now.Sub(t0))}
	}})
	line := func(now time.Time) string { return m.Render(now, 60, 8).Lines[4].String() }
	require.Regexp(t, `^a +x +5s$`, line(t0.Add(5*time.Second)))
	require.Regexp(t, `^a +x +5s$`, line(t0.Add(5*time.Second+900*time.Millisecond)))
	require.Equal(t, 1, calls, "cells are computed once per second of the clock")
	require.Regexp(t, `^a +x +2m3s$`, line(t0.Add(123*time.Second)))
	require.Equal(t, 2, calls)
}

func TestModelScroll(t *testing.T) {
	m := NewModel(Options{Resource: "pods", Columns: []string{"NAME"}})
	for i := range 20 {
		name := fmt.Sprintf("p%02d", i)
		m.Upsert(Row{Key: name, Name: name, Cells: func(time.Time) []string { return []string{name} }})
	}
	// first returns the first row shown and the selected one.
	first := func(ks ...Key) (string, string) {
		keys(m, ks...)
		f := m.Render(t0, 40, 10) // 5 rows fit under 4 top lines and the footer
		sel := ""
		for _, l := range f.Lines[4:9] {
			if len(l) > 0 && l[len(l)-1].Style == StyleSelected {
				sel = strings.TrimSpace(l.String())
			}
		}
		return f.Lines[4].String(), sel
	}
	top, sel := first()
	require.Equal(t, []string{"p00", ""}, []string{top, sel}, "the first row is selected, not drawn so until the cursor moves")
	tests := []struct {
		key       Key
		top, want string // the first row shown, the selected one
	}{
		{Key{Code: KeyDown}, "p00", "p01"},
		{R('j'), "p00", "p02"},
		{Key{Code: KeyUp}, "p00", "p01"},
		{Key{Code: KeyPgDn}, "p05", "p06"},
		{R(' '), "p10", "p11"},
		{Key{Code: KeyPgUp}, "p05", "p06"},
		{Key{Code: KeyEnd}, "p15", "p19"},
		{Key{Code: KeyDown}, "p15", "p19"}, // past the end stays on the last row
		{Key{Code: KeyHome}, "p00", "p00"},
		{Key{Code: KeyUp}, "p00", "p00"},
		{R('G'), "p15", "p19"},
		{R('g'), "p00", "p00"},
	}
	for _, tc := range tests {
		top, sel := first(tc.key)
		require.Equal(t, []string{tc.top, tc.want}, []string{top, sel}, "after %+v", tc.key)
	}
	keys(m, Key{Code: KeyEnd})
	require.Contains(t, m.Render(t0, 80, 10).Lines[0].String(), "20 (rows 16-20)")
	for i := 5; i < 20; i++ {
		m.Delete(fmt.Sprintf("p%02d", i))
	}
	top, _ = first()
	require.Equal(t, "p00", top, "fewer rows pull the view back")
}

func TestStatusStyle(t *testing.T) {
	tests := []struct {
		status string
		want   Style
	}{
		{"Running", StyleGood},
		{"Pending", StyleWarn},
		{"ContainerCreating", StyleWarn},
		{"Init:0/2", StyleWarn},
		{"Init:CrashLoopBackOff", StyleBad},
		{"Init:Error", StyleBad},
		{"Failed", StyleBad},
		{"CrashLoopBackOff", StyleBad},
		{"Error", StyleBad},
		{"CreateContainerConfigError", StyleBad},
		{"ExitCode:137", StyleBad},
		{"Terminating", StyleDim},
		{"Completed", StyleDim},
		{"SomethingNew", StyleWarn},
		{"", StyleNormal},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, StatusStyle(tc.status), "status %q", tc.status)
	}
}

func TestModelSetColumns(t *testing.T) {
	m := NewModel(Options{Resource: "widgets"})
	m.Upsert(Row{Key: "w", Name: "w", Status: "Failed", Cells: func(time.Time) []string { return []string{"w", "Failed"} }})
	require.Empty(t, m.Render(t0, 40, 8).Lines[4].String(), "no columns yet: no cells")
	m.SetColumns([]string{"NAME", "Status"})
	f := m.Render(t0, 40, 8)
	require.Regexp(t, `^NAME +Status$`, f.Lines[3].String())
	require.Equal(t, Line{{Text: "w      ", Style: StyleNormal}, {Text: "Failed", Style: StyleBad}}, f.Lines[4],
		"a Status column is coloured whatever its case")
}

// TestModelOrderProperty applies random upserts, replacements and deletes,
// rendering now and then, and checks the rows against a plain map.
func TestModelOrderProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := podModel()
	statuses := []string{"Running", "Pending", "Error", "Completed"}
	want := map[string]Row{}
	for step := range 6000 {
		ns, name := fmt.Sprintf("ns-%d", rng.IntN(4)), fmt.Sprintf("p-%02d", rng.IntN(40))
		key := ns + "/" + name
		switch rng.IntN(6) {
		case 0:
			m.Delete(key)
			delete(want, key)
		case 1:
			m.SetOrder(Order(rng.IntN(int(orders))))
		default:
			r := pod(ns, name, statuses[rng.IntN(len(statuses))], t0)
			r.Created = t0.Add(-time.Duration(rng.IntN(5)) * time.Hour)
			m.Upsert(r)
			want[key] = r
		}
		if rng.IntN(20) == 0 || step == 5999 {
			var rows []*entry
			for _, r := range want {
				rows = append(rows, &entry{row: r})
			}
			slices.SortFunc(rows, m.compare)
			var keys []string
			for _, e := range rows {
				keys = append(keys, e.row.Key)
			}
			require.Equal(t, keys, m.Keys(t0), "step %d, by %s", step, m.Order())
			require.Equal(t, len(want), m.Len())
			_, shown := m.Counts(t0)
			require.Equal(t, len(want), shown)
		}
	}
}

func BenchmarkModelInitialList(b *testing.B) {
	rows := make([]Row, 10000)
	for i := range rows {
		rows[i] = pod(fmt.Sprintf("ns-%d", i%7), fmt.Sprintf("pod-%05d", (i*7919)%10000), "Running", t0)
	}
	for b.Loop() {
		m := podModel()
		for _, r := range rows {
			m.Upsert(r)
		}
		m.Render(t0, 200, 50)
	}
}

func BenchmarkModelChurnFrame(b *testing.B) {
	m := podModel()
	for i := range 10000 {
		m.Upsert(pod(fmt.Sprintf("ns-%d", i%7), fmt.Sprintf("pod-%05d", i), "Running", t0))
	}
	m.Render(t0, 200, 50)
	i := 0
	for b.Loop() { // a frame's worth of changes: one add, one delete, ten replacements, then the frame
		i++
		m.Upsert(pod("ns-new", fmt.Sprintf("pod-%07d", i), "Pending", t0))
		m.Delete(fmt.Sprintf("ns-%d/pod-%05d", i%7, i%10000))
		for j := range 10 {
			m.Upsert(pod(fmt.Sprintf("ns-%d", j%7), fmt.Sprintf("pod-%05d", (i+j)%10000), "Running", t0))
		}
		m.Render(t0.Add(time.Duration(i)*time.Second), 200, 50)
	}
}

func TestModelChangedRowsAreBold(t *testing.T) {
	r := pod("a", "x", "Running", t0)
	r.Changed = t0
	m := podModel(r, pod("a", "y", "Running", t0))
	styles := func(now time.Time, line int) []Style {
		var s []Style
		for _, sp := range m.Render(now, 60, 8).Lines[line] {
			s = append(s, sp.Style)
		}
		return s
	}
	bold := []Style{StyleChanged, StyleChanged, StyleGood, StyleChanged}
	plain := []Style{StyleNormal, StyleNormal, StyleGood, StyleNormal}
	require.Equal(t, bold, styles(t0.Add(time.Second), 4), "just changed")
	require.Equal(t, plain, styles(t0.Add(time.Second), 5), "never changed (the initial list)")
	require.Equal(t, plain, styles(t0.Add(changedFor), 4), "no longer")
}

func TestModelSort(t *testing.T) {
	aged := func(ns, name, status string, age time.Duration) Row {
		r := pod(ns, name, status, t0.Add(-age))
		r.Created = t0.Add(-age)
		return r
	}
	m := podModel(aged("a", "old", "Running", time.Hour), aged("a", "crash", "CrashLoopBackOff", 2*time.Hour),
		aged("b", "new", "Pending", time.Minute), aged("b", "done", "Completed", 3*time.Hour),
		pod("b", "unknown-age", "Running", t0), aged("c", "bad", "Error", time.Second))
	require.Equal(t, ByName, m.Order())
	byName := []string{"a/crash", "a/old", "b/done", "b/new", "b/unknown-age", "c/bad"}
	require.Equal(t, byName, m.Keys(t0))

	keys(m, R('s'))
	require.Equal(t, ByStatus, m.Order())
	require.Equal(t, []string{"a/crash", "c/bad", "b/new", "a/old", "b/unknown-age", "b/done"}, m.Keys(t0),
		"failing first, then on their way, then running, then done")
	require.Contains(t, m.Render(t0, 80, 10).Lines[0].String(), " · by status")
	m.Upsert(aged("a", "old", "CrashLoopBackOff", time.Hour)) // a change of status moves the row
	require.Equal(t, []string{"a/crash", "a/old", "c/bad", "b/new", "b/unknown-age", "b/done"}, m.Keys(t0))
	m.Upsert(aged("a", "old", "Running", time.Hour))

	keys(m, R('s'))
	require.Equal(t, ByAge, m.Order())
	require.Equal(t, []string{"c/bad", "b/new", "a/old", "a/crash", "b/done", "b/unknown-age"}, m.Keys(t0),
		"newest first, unknown ages last")

	keys(m, R('s'))
	require.Equal(t, byName, m.Keys(t0), "and back to names")
	require.NotContains(t, m.Render(t0, 80, 10).Lines[0].String(), " · by ")
	m.SetOrder(Order(42))
	require.Equal(t, ByName, m.Order(), "an unknown order is by name")
	require.Equal(t, "age", ByAge.String())
}

// TestModelChangedCellsAreMarked: the cells that changed are marked (bold
// and underlined) for changedFor after the change, by the model's clock,
// the others bold; then the row is plain again.
func TestModelChangedCellsAreMarked(t *testing.T) {
	r := pod("a", "x", "Running", t0)
	r.Changed, r.CellsChanged = t0, []time.Time{t0}
	m := podModel(r)
	styles := func(now time.Time) map[string]Style {
		out := map[string]Style{}
		for _, sp := range m.Render(now, 60, 8).Lines[4] {
			if txt := strings.TrimSpace(sp.Text); txt != "" {
				out[txt] = sp.Style
			}
		}
		return out
	}
	got := styles(t0.Add(time.Second))
	require.Equal(t, StyleChangedCell, got["x"], "the changed cell: %v", got)
	require.Equal(t, StyleChanged, got["a"], "the row's other cells are bold: %v", got)
	require.Equal(t, StyleGood, got["Running"], "the status keeps its colour: %v", got)
	got = styles(t0.Add(changedFor))
	require.Equal(t, StyleNormal, got["x"], "no longer: %v", got)
}

// TestModelDetailPane: Enter shows the selected row's last changes, newest
// first, scrollable; Esc goes back to the table; a change arriving
// meanwhile shows at once.
func TestModelDetailPane(t *testing.T) {
	r := pod("a", "x", "Running", t0)
	r.History = []Change{
		{At: t0, Event: "MODIFIED", Lines: []string{"status.phase: Pending → Running"}},
		{At: t0.Add(time.Second), Event: "MODIFIED", Lines: []string{"spec.replicas: 3 → 5", "metadata.labels.app: (added) web"}},
	}
	m := podModel(r, pod("b", "y", "Running", t0))
	keys(m, Key{Code: KeyEnter})
	f := m.Render(t0, 60, 10).String()
	require.Contains(t, f, "CHANGES OF a/x\n")
	want := "12:00:01  MODIFIED\n    spec.replicas: 3 → 5\n    metadata.labels.app: (added) web\n12:00:00  MODIFIED\n    status.phase: Pending → Running\n"
	require.Contains(t, f, want, "newest first")
	require.Contains(t, f, "Esc back")
	keys(m, Key{Code: KeyDown}, Key{Code: KeyDown})
	f = m.Render(t0, 60, 7).String() // two lines of the pane
	require.Contains(t, f, "CHANGES OF a/x\n    metadata.labels.app: (added) web\n12:00:00  MODIFIED\n")
	keys(m, Key{Code: KeyEsc})
	require.Contains(t, m.Render(t0, 60, 10).String(), "NAMESPACE   NAME", "back to the table")

	keys(m, Key{Code: KeyDown}, Key{Code: KeyEnter})
	require.Contains(t, m.Render(t0, 60, 10).String(), "CHANGES OF b/y\n  no change seen since kwatch started")
	y := pod("b", "y", "Running", t0)
	y.History = []Change{{At: t0, Event: "MODIFIED", Lines: []string{"spec.x: 1 → 2"}}}
	m.Upsert(y)
	require.Contains(t, m.Render(t0, 60, 10).String(), "    spec.x: 1 → 2\n", "a change shows at once")
}
