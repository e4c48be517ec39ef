package printers

import (
	"io"
	"strings"
	"unicode/utf8"
)

// columnGap is the space between columns, as kubectl's tab writer pads.
const columnGap = 3

// eventWidth fits the longest event type, MODIFIED.
const eventWidth = len("MODIFIED")

// ANSI colours of the event column.
const (
	ansiReset  = "\x1b[0m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
)

// Row is one table row: the event that produced it ("" when the table has
// no event column) and its cells, one per column.
type Row struct {
	Event string
	Cells []string
}

// Table writes rows aligned in columns, kubectl style: upper-case headers,
// three spaces between columns, no trailing spaces.
//
// A stream cannot be re-aligned once printed, so column widths are fixed by
// the first batch (the initial list) and the headers, never below
// MinWidths, and only grow afterwards when a longer cell comes. The zero
// value (with W and Headers set) is ready to use. A Table is not safe for
// concurrent use.
type Table struct {
	W       io.Writer
	Headers []string
	// MinWidths are the narrowest widths of the columns, in Headers order;
	// missing entries mean the header's width.
	MinWidths []int
	// Event adds an EVENT column first (ADDED, MODIFIED, DELETED).
	Event bool
	// Color paints the event column (ADDED green, MODIFIED yellow, DELETED red).
	Color bool
	// NoHeader leaves the header out; widths are the cells' alone, as
	// kubectl's --no-headers sizes them.
	NoHeader bool
	// Slack is extra width given to columns sized by the first batch's
	// cells, so that slightly longer values later (a new pod's name) do not
	// shift the columns right of them. Zero means none.
	Slack int

	widths  []int // current widths of the cell columns; nil until the header is written
	scratch strings.Builder
}

// Write prints rows, with the header first if it has not been printed. Each
// row is one Write call on W.
func (t *Table) Write(rows []Row) error {
	if t.widths == nil {
		t.widths = t.initialWidths(rows)
		head := Row{Cells: t.Headers}
		if t.Event {
			head.Event = "EVENT"
		}
		if !t.NoHeader {
			if err := t.writeRow(head, false); err != nil {
				return err
			}
		}
	}
	for _, r := range rows {
		t.grow(r.Cells)
		if err := t.writeRow(r, t.Color); err != nil {
			return err
		}
	}
	return nil
}

// Started reports whether the header has been written.
func (t *Table) Started() bool { return t.widths != nil }

func (t *Table) initialWidths(rows []Row) []int {
	w := make([]int, len(t.Headers))
	for i, h := range t.Headers {
		// kubectl's tabwriter makes a cell at least 6 wide with its 3
		// spaces of padding: a column is never narrower than 3.
		w[i] = 3
		if !t.NoHeader {
			w[i] = max(w[i], utf8.RuneCountInString(h))
		}
		if i < len(t.MinWidths) && t.MinWidths[i] > w[i] {
			w[i] = t.MinWidths[i]
		}
	}
	for i := range w {
		longest := 0
		for _, r := range rows {
			if i < len(r.Cells) {
				longest = max(longest, CellWidth(r.Cells[i]))
			}
		}
		if longest > w[i] {
			w[i] = longest + t.Slack
		}
	}
	return w
}

func (t *Table) grow(cells []string) {
	for i, c := range cells {
		if i < len(t.widths) {
			t.widths[i] = max(t.widths[i], CellWidth(c))
		}
	}
}

func (t *Table) writeRow(r Row, color bool) error {
	b := &t.scratch
	b.Reset()
	if t.Event {
		if color {
			b.WriteString(eventColor(r.Event))
			b.WriteString(r.Event)
			b.WriteString(ansiReset)
		} else {
			b.WriteString(r.Event)
		}
		pad(b, eventWidth+columnGap-utf8.RuneCountInString(r.Event))
	}
	for i, c := range r.Cells {
		shown := DisplayCell(c)
		b.WriteString(shown)
		if i < len(r.Cells)-1 && i < len(t.widths) {
			pad(b, t.widths[i]+columnGap-utf8.RuneCountInString(shown))
		}
	}
	b.WriteByte('\n')
	_, err := io.WriteString(t.W, b.String())
	return err
}

func pad(b *strings.Builder, n int) {
	for ; n > 0; n-- {
		b.WriteByte(' ')
	}
}

func eventColor(ev string) string {
	switch ev {
	case "ADDED":
		return ansiGreen
	case "MODIFIED":
		return ansiYellow
	case "DELETED":
		return ansiRed
	}
	return ""
}
