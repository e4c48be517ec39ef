package live

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Layout of a frame: four lines on top (title, connection, counts, the
// table's header), the rows, and a line of key hints at the bottom.
const (
	topLines    = 4
	columnGap   = 3  // spaces between columns, as kubectl pads
	maxColWidth = 63 // a longer cell is cut with an ellipsis
)

// Render draws the model at now on a screen of width x height cells. It
// also clamps the scroll position to the rows there are and remembers the
// page size for PgUp and PgDn.
func (m *Model) Render(now time.Time, width, height int) Frame {
	width, height = max(width, 0), max(height, 0)
	rows := m.visible(now)
	counts, shown := countStatuses(rows)
	body := max(height-topLines-1, 0)
	m.page = max(body, 1)

	var header Line
	var lines []Line
	switch m.mode {
	case modeNamespaces:
		header = Line{{Text: "NAMESPACE", Style: StyleHeader}}
		lines = m.pickerLines(body)
	case modeDetail:
		if m.selected == "" { // Enter before any table was drawn
			m.placeCursor(rows, body)
		}
		header, lines = m.detailLines(body)
	default:
		var widths []int
		header, widths = m.layout(rows)
		m.placeCursor(rows, body)
		for i, e := range rows[m.offset:min(m.offset+body, len(rows))] {
			lines = append(lines, m.rowLine(e, widths, now, m.showCursor && m.offset+i == m.cursor))
		}
	}
	content := append([]Line{m.titleLine(shown), connLine(m.conn, now), countsLine(counts, shown), header}, lines...)
	f := Frame{Width: width, Height: height, Lines: make([]Line, height)}
	for i := 0; i < height-1 && i < len(content); i++ {
		f.Lines[i] = content[i].clip(width)
	}
	if height > 0 {
		f.Lines[height-1] = m.footer().clip(width)
	}
	return f
}

// columns returns the headers shown: NAMESPACE first while every namespace
// of a namespaced resource is shown.
func (m *Model) columns() []string {
	if m.opts.Namespaced && m.namespace == "" {
		return append([]string{"NAMESPACE"}, m.opts.Columns...)
	}
	return m.opts.Columns
}

// layout returns the header line and the columns' widths, sized to the
// header and the cells of every row that passes the filter (not only the
// page shown, so that scrolling does not move the columns).
func (m *Model) layout(rows []*entry) (Line, []int) {
	cols := m.columns()
	widths := make([]int, len(cols))
	for i, c := range cols {
		widths[i] = utf8.RuneCountInString(c)
	}
	for _, e := range rows {
		for i, c := range m.rowCells(e) {
			if i < len(widths) {
				widths[i] = max(widths[i], min(utf8.RuneCountInString(c), maxColWidth))
			}
		}
	}
	var b strings.Builder
	for i, c := range cols {
		b.WriteString(padCell(c, widths[i], i == len(cols)-1))
	}
	return Line{{Text: b.String(), Style: StyleHeader}}, widths
}

// rowCells are e's cells as shown, with the namespace first when shown.
func (m *Model) rowCells(e *entry) []string {
	if m.opts.Namespaced && m.namespace == "" {
		return append([]string{e.row.Namespace}, e.cells...)
	}
	return e.cells
}

// rowLine lays out one row; the STATUS cell takes the status's colour, a
// row on its way out (Terminating) is dim as a whole, and one that changed
// a moment ago is bold.
func (m *Model) rowLine(e *entry, widths []int, now time.Time, selected bool) Line {
	style := StatusStyle(e.row.Status)
	base := StyleNormal
	recent := changedRecently(e.row, now)
	switch {
	case style == StyleDim:
		base = StyleDim
	case recent:
		base = StyleChanged
	}
	shift := 0 // the NAMESPACE cell comes first while every namespace shows
	if m.opts.Namespaced && m.namespace == "" {
		shift = 1
	}
	status := m.status
	if status >= 0 {
		status += shift
	}
	var l Line
	cells := m.rowCells(e)
	for i, w := range widths {
		c := ""
		if i < len(cells) {
			c = cells[i]
		}
		s := base
		switch {
		case i >= shift && i-shift < len(e.row.CellsChanged) && within(e.row.CellsChanged[i-shift], now):
			s = StyleChangedCell
		case i == status:
			s = style
		}
		text := padCell(c, w, i == len(widths)-1)
		if s == StyleChangedCell { // the mark covers the cell's text, not the gap after it
			trimmed := strings.TrimRight(text, " ")
			l = l.add(trimmed, s).add(text[len(trimmed):], base)
			continue
		}
		l = l.add(text, s)
	}
	if selected {
		l = Line{}.add("", StyleNormal).add(l.String(), StyleSelected)
	}
	return l
}

// placeCursor keeps the cursor on a row and that row on the page, and
// remembers its key for the detail pane.
func (m *Model) placeCursor(rows []*entry, body int) {
	m.cursor = min(max(m.cursor, 0), max(len(rows)-1, 0))
	m.offset = min(max(m.offset, 0), max(len(rows)-body, 0))
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if body > 0 && m.cursor >= m.offset+body {
		m.offset = m.cursor - body + 1
	}
	m.selected = ""
	if m.cursor < len(rows) {
		m.selected = rows[m.cursor].row.Key
	}
}

// changedRecently: r changed less than changedFor before now.
func changedRecently(r Row, now time.Time) bool { return within(r.Changed, now) }

// within: t is set and less than changedFor before now.
func within(t, now time.Time) bool { return !t.IsZero() && now.Sub(t) < changedFor }

// padCell fits c into w cells, plus the gap unless it is the last column.
func padCell(c string, w int, last bool) string {
	c = truncate(c, w)
	if last {
		return c
	}
	return c + strings.Repeat(" ", w-utf8.RuneCountInString(c)+columnGap)
}

// titleLine names what is shown and how many rows of how many.
func (m *Model) titleLine(shown int) Line {
	l := Line{}.add("kwatch", StyleTitle).add(" · "+m.opts.Resource, StyleTitle)
	switch {
	case m.namespace != "":
		l = l.add(" · namespace "+m.namespace, StyleNormal)
	case m.opts.Scope != "":
		l = l.add(" · "+m.opts.Scope, StyleNormal)
	}
	if m.filter != "" {
		l = l.add(fmt.Sprintf(" · filter %q", m.filter), StyleWarn)
	}
	if m.order != ByName {
		l = l.add(" · by "+m.order.String(), StyleNormal)
	}
	n := strconv.Itoa(len(m.rows))
	if shown != len(m.rows) {
		n = strconv.Itoa(shown) + " of " + n
	}
	if m.offset > 0 || m.offset+m.page < shown {
		n += fmt.Sprintf(" (rows %d-%d)", min(m.offset+1, shown), min(m.offset+m.page, shown))
	}
	return l.add(" · "+n, StyleNormal)
}

// countsLine shows how many shown rows have each status.
func countsLine(counts []StatusCount, shown int) Line {
	var l Line
	for i, c := range counts {
		if i > 0 {
			l = l.add("  ", StyleNormal)
		}
		l = l.add(c.Status+" "+strconv.Itoa(c.N), StatusStyle(c.Status))
	}
	if len(counts) == 0 {
		l = l.add(fmt.Sprintf("%d shown", shown), StyleDim)
	}
	return l
}

// footer shows the keys of the current mode.
func (m *Model) footer() Line {
	switch m.mode {
	case modeFilter:
		return Line{}.add("/"+m.filter+"█", StyleTitle).add("   Enter keep · Esc clear", StyleDim)
	case modeNamespaces:
		return Line{}.add("↑↓ choose · Enter show · Esc back", StyleDim)
	case modeDetail:
		return Line{}.add("↑↓ PgUp PgDn Home End scroll · Esc back · q quit", StyleDim)
	}
	keys := "/ filter · n namespace · s sort · ↑↓ move · Enter changes · q quit"
	if !m.opts.Namespaced {
		keys = "/ filter · s sort · ↑↓ move · Enter changes · q quit"
	}
	l := Line{}.add(keys, StyleDim)
	if m.filter != "" || m.namespace != "" {
		l = l.add(" · Esc shows all", StyleDim)
	}
	return l
}

// pickerLines lists "all namespaces" and every namespace seen, with its
// rows, the cursor's line selected, scrolled so the cursor shows.
func (m *Model) pickerLines(body int) []Line {
	names := m.Namespaces()
	m.pick = min(max(m.pick, 0), len(names))
	first := 0
	if body > 0 && m.pick >= body {
		first = m.pick - body + 1
	}
	var lines []Line
	for i := first; i <= len(names) && len(lines) < body; i++ {
		text := fmt.Sprintf("all namespaces (%d)", len(m.rows))
		if i > 0 {
			text = fmt.Sprintf("%s (%d)", names[i-1], m.perNamespace[names[i-1]])
		}
		if i == m.pick {
			lines = append(lines, Line{{Text: "▸ " + text, Style: StyleSelected}})
		} else {
			lines = append(lines, Line{{Text: "  " + text}})
		}
	}
	return lines
}
