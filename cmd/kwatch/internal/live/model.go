package live

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Row is one object of the table, a plain value: the zero value is a row
// with an empty key and no cells.
type Row struct {
	// Key identifies the row: an Upsert with the same Key replaces it.
	Key string
	// Namespace is the object's namespace, "" for a cluster-scoped one.
	// Rows sort by namespace, then name, as kubectl sorts a list.
	Namespace, Name string
	// Status is the row's status as the printer computed it ("Running",
	// "CrashLoopBackOff", "Terminating"): it colours the STATUS cell and is
	// counted in the header. "" for resources without one.
	Status string
	// Cells computes the row's cells, one per Options.Columns, at a time,
	// so that ages tick as the clock moves. The model calls it at most once
	// per row per second of its clock and caches the result; it must not
	// block. Nil means a row of empty cells.
	Cells func(now time.Time) []string
	// Created is when the object was created, for sorting by age; zero
	// sorts last.
	Created time.Time
	// Changed is when the object last changed as the view heard of it
	// (zero for the initial list): for changedFor after it the row is
	// bold, as "watch -d" highlights what changed.
	Changed time.Time
	// CellsChanged[i] is when cell i (of Cells, without NAMESPACE) last
	// changed, as the view heard of it: for changedFor after it the cell is
	// marked. Zero, nil or short: not changed.
	CellsChanged []time.Time
	// History is the object's last changes, oldest first, for the detail
	// pane (Enter); nil for none.
	History []Change
}

// Change is one change of an object as the detail pane shows it: when the
// view heard of it, what kind ("MODIFIED"), and one line per field
// (diff.Change's form). A plain value.
type Change struct {
	At    time.Time
	Event string
	Lines []string
}

// changedFor is how long a changed row stays bold and its changed cells
// marked.
const changedFor = 3 * time.Second

// Options configure a Model. The zero value is a model with no columns.
type Options struct {
	// Resource names what is shown in the title ("pods").
	Resource string
	// Columns are the headers of the rows' cells. A column named STATUS is
	// painted by the row's status.
	Columns []string
	// Namespaced adds a NAMESPACE column while every namespace is shown and
	// lets the user pick one (key n).
	Namespaced bool
	// Scope says what the command watches, for the title ("all
	// namespaces", "namespace demo"); "" says nothing.
	Scope string
}

// entry is a row with its cells cached for one second of the clock.
type entry struct {
	row   Row
	cells []string // nil until computed
	lower string   // the cells and namespace, lower-cased, for the filter
	at    int64    // the clock's Unix second the cells were computed at
	// deleted: the row was deleted or replaced by another entry; merge
	// drops it from sorted.
	deleted bool
}

// mode is what keys do: the table scrolls, the filter is typed, or a
// namespace is being picked.
type mode int

const (
	modeTable mode = iota
	modeFilter
	modeNamespaces
	modeDetail // the selected row's last changes
)

// Model is the live view's state: the rows, the connection, and what the
// user chose to see (filter, namespace, scroll position). Events change it
// (Upsert, Delete, SetConn, Key) and Render draws it at a given time, with
// no terminal and no clock of its own, so everything it shows is tested as
// plain values.
//
// The zero value is not usable; build one with NewModel. A Model is not
// safe for concurrent use: Run owns it and applies Updates on its own
// goroutine.
type Model struct {
	opts Options
	// status is the index of the STATUS column in opts.Columns, -1 if none.
	status int

	// rows holds every row by key. sorted holds entries ordered by
	// namespace then name, some of them deleted since it was last merged;
	// added holds entries added since, unordered. Every live entry is in
	// exactly one of sorted and added; merge restores sorted to rows.
	rows   map[string]*entry
	sorted []*entry
	added  []*entry
	stale  bool // sorted holds deleted entries
	// perNamespace counts rows per namespace, for the namespace picker;
	// a namespace with no rows left is removed.
	perNamespace map[string]int

	conn Conn

	mode      mode
	order     Order
	filter    string // the filter as typed; "" shows every row
	namespace string // picked namespace; "" shows all
	pick      int    // cursor in the namespace list (0 is "all") while picking
	offset    int    // first row shown, after filtering
	cursor    int    // the selected row, after filtering; Render keeps it shown
	// showCursor: the user moved the cursor, so its row is drawn selected
	// (until then the first row is selected but drawn as the others).
	showCursor bool
	page       int // table rows the last Render showed (PgUp/PgDn move by it)
	// selected is the key of the cursor's row at the last Render, whose
	// changes the detail pane shows; detailOffset scrolls the pane.
	selected     string
	detailOffset int
}

// NewModel returns an empty model.
func NewModel(opts Options) *Model {
	m := &Model{rows: map[string]*entry{}, perNamespace: map[string]int{}, page: 1}
	m.opts = opts
	m.SetColumns(opts.Columns)
	return m
}

// SetColumns replaces the headers of the rows' cells: a table whose
// columns are known only once rows arrive (a server's Table), or changed
// (a custom resource's printer columns were edited). Every row's cells are
// computed again.
func (m *Model) SetColumns(columns []string) {
	m.opts.Columns, m.status = columns, -1
	for i, c := range columns {
		if strings.EqualFold(c, "STATUS") {
			m.status = i
		}
	}
	for _, e := range m.rows {
		e.cells = nil
	}
}

// Len returns the number of rows, shown or not.
func (m *Model) Len() int { return len(m.rows) }

// Upsert adds a row or replaces the row with the same key. A replacement
// that sorts the same keeps its place; additions, deletions and moves are
// merged into the order once per Render, so a large initial list costs a
// sort, not an insertion per row.
func (m *Model) Upsert(r Row) {
	if e, ok := m.rows[r.Key]; ok && m.compare(e, &entry{row: r}) == 0 {
		e.row, e.cells = r, nil
		return
	}
	m.Delete(r.Key)
	e := &entry{row: r}
	m.rows[r.Key] = e
	m.added = append(m.added, e)
	m.perNamespace[r.Namespace]++
}

// Delete removes the row with key, if there is one.
func (m *Model) Delete(key string) {
	e, ok := m.rows[key]
	if !ok {
		return
	}
	delete(m.rows, key)
	e.deleted, m.stale = true, true
	if m.perNamespace[e.row.Namespace]--; m.perNamespace[e.row.Namespace] <= 0 {
		delete(m.perNamespace, e.row.Namespace)
	}
}

// merge drops deleted entries from sorted and merges the added ones in.
func (m *Model) merge() {
	if len(m.added) == 0 && !m.stale {
		return
	}
	added := slices.DeleteFunc(m.added, func(e *entry) bool { return e.deleted })
	slices.SortFunc(added, m.compare)
	out := make([]*entry, 0, len(m.rows))
	i := 0
	for _, e := range m.sorted {
		if e.deleted {
			continue
		}
		for ; i < len(added) && m.compare(added[i], e) < 0; i++ {
			out = append(out, added[i])
		}
		out = append(out, e)
	}
	m.sorted, m.added, m.stale = append(out, added[i:]...), nil, false
}

// Order is how rows are sorted. The zero value is ByName.
type Order int

const (
	// ByName sorts by namespace, then name, as kubectl lists.
	ByName Order = iota
	// ByStatus puts failing rows first, then those on their way, then the
	// rest (running, done, going away), each by name.
	ByStatus
	// ByAge puts the newest rows first.
	ByAge
	orders // the number of orders
)

func (o Order) String() string {
	switch o {
	case ByStatus:
		return "status"
	case ByAge:
		return "age"
	}
	return "name"
}

// statusRank orders statuses for ByStatus: what needs a look first.
func statusRank(status string) int {
	switch StatusStyle(status) {
	case StyleBad:
		return 0
	case StyleWarn:
		return 1
	case StyleGood:
		return 3
	case StyleDim:
		return 4
	}
	return 2
}

// compare orders two rows by the model's order, then by namespace, name
// and key (two objects may share a name in a table of several kinds): a
// total order, so that merging is stable.
func (m *Model) compare(a, b *entry) int {
	var c int
	switch m.order {
	case ByStatus:
		c = cmp.Compare(statusRank(a.row.Status), statusRank(b.row.Status))
	case ByAge:
		c = cmp.Or(cmp.Compare(zeroLast(a.row.Created), zeroLast(b.row.Created)), b.row.Created.Compare(a.row.Created))
	}
	return cmp.Or(c, cmp.Compare(a.row.Namespace, b.row.Namespace), cmp.Compare(a.row.Name, b.row.Name),
		cmp.Compare(a.row.Key, b.row.Key))
}

// zeroLast ranks a zero time after every other.
func zeroLast(t time.Time) int {
	if t.IsZero() {
		return 1
	}
	return 0
}

// SetOrder sorts the rows by o.
func (m *Model) SetOrder(o Order) {
	if o < 0 || o >= orders {
		o = ByName
	}
	m.merge()
	m.order = o
	slices.SortFunc(m.sorted, m.compare)
}

// Order returns how the rows are sorted.
func (m *Model) Order() Order { return m.order }

// SetConn records the connection's state.
func (m *Model) SetConn(c Conn) { m.conn = c }

// Filter returns the applied filter text ("" for none).
func (m *Model) Filter() string { return m.filter }

// Namespace returns the picked namespace ("" for all).
func (m *Model) Namespace() string { return m.namespace }

// Namespaces returns the namespaces of the rows, sorted.
func (m *Model) Namespaces() []string {
	ns := make([]string, 0, len(m.perNamespace))
	for n := range m.perNamespace {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// cellsAt returns e's cells at now, computing them at most once per second.
func (m *Model) cellsAt(e *entry, now time.Time) []string {
	sec := now.Unix()
	if e.cells != nil && e.at == sec {
		return e.cells
	}
	var cells []string
	if e.row.Cells != nil {
		cells = e.row.Cells(now)
	}
	if cells == nil {
		cells = []string{}
	}
	e.cells, e.at = cells, sec
	e.lower = strings.ToLower(e.row.Namespace + "\x00" + strings.Join(cells, "\x00"))
	return cells
}

// visible returns the rows that pass the namespace pick and the filter, in
// order, their cells computed at now.
func (m *Model) visible(now time.Time) []*entry {
	m.merge()
	var out []*entry
	filter := strings.ToLower(m.filter)
	for _, e := range m.sorted {
		if m.namespace != "" && e.row.Namespace != m.namespace {
			continue
		}
		m.cellsAt(e, now)
		if filter != "" && !strings.Contains(e.lower, filter) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// StatusCount is how many shown rows have one status; a plain value.
type StatusCount struct {
	Status string
	N      int
}

// Counts returns how many rows the view shows at now per status, most
// frequent first (then by status), and the number shown.
func (m *Model) Counts(now time.Time) ([]StatusCount, int) {
	return countStatuses(m.visible(now))
}

func countStatuses(rows []*entry) ([]StatusCount, int) {
	per := map[string]int{}
	for _, e := range rows {
		if e.row.Status != "" {
			per[e.row.Status]++
		}
	}
	out := make([]StatusCount, 0, len(per))
	for s, n := range per {
		out = append(out, StatusCount{Status: s, N: n})
	}
	slices.SortFunc(out, func(a, b StatusCount) int { return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Status, b.Status)) })
	return out, len(rows)
}

// Keys returns the keys of the rows shown at now, in order.
func (m *Model) Keys(now time.Time) []string {
	var keys []string
	for _, e := range m.visible(now) {
		keys = append(keys, e.row.Key)
	}
	return keys
}
