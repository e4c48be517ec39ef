package live

import (
	"time"
)

// detailLines is the changes pane of the selected row: a header naming
// the object, then its last changes, newest first, each a line with its
// time and kind and one line per field, scrolled by detailOffset.
func (m *Model) detailLines(body int) (Line, []Line) {
	e, ok := m.rows[m.selected]
	if !ok {
		return Line{{Text: "CHANGES", Style: StyleHeader}}, []Line{{{Text: "  the object is gone", Style: StyleDim}}}
	}
	name := e.row.Name
	if e.row.Namespace != "" {
		name = e.row.Namespace + "/" + name
	}
	header := Line{{Text: "CHANGES OF " + name, Style: StyleHeader}}
	var all []Line
	h := e.row.History
	for i := len(h) - 1; i >= 0; i-- {
		c := h[i]
		all = append(all, Line{}.add(c.At.Format(time.TimeOnly)+"  "+c.Event, StyleTitle))
		for _, l := range c.Lines {
			all = append(all, Line{}.add("    "+l, StyleNormal))
		}
	}
	if len(all) == 0 {
		all = []Line{{{Text: "  no change seen since kwatch started", Style: StyleDim}}}
	}
	m.detailOffset = min(max(m.detailOffset, 0), max(len(all)-body, 0))
	return header, all[m.detailOffset:min(m.detailOffset+body, len(all))]
}
