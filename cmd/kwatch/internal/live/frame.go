package live

import (
	"strings"
	"unicode/utf8"
)

// Style is how a span is painted. The screen maps styles to colours; a
// terminal without colours (NO_COLOR) still shows reverse and dim. The
// zero value is StyleNormal.
type Style int

const (
	StyleNormal      Style = iota
	StyleTitle             // bold
	StyleHeader            // the table's header: reverse
	StyleGood              // green: Running, Completed, watching
	StyleWarn              // yellow: Pending, ContainerCreating, listing
	StyleBad               // red: Failed, CrashLoopBackOff, Error, reconnecting
	StyleDim               // dim: Terminating, hints
	StyleSelected          // reverse: the namespace under the cursor
	StyleChanged           // bold: a row that changed a moment ago
	StyleChangedCell       // bold and underlined: a cell that changed a moment ago
)

// Span is text in one style; a plain value.
type Span struct {
	Text  string
	Style Style
}

// Line is one screen line, left to right; nil is an empty line.
type Line []Span

func (l Line) add(text string, s Style) Line {
	if text == "" {
		return l
	}
	return append(l, Span{Text: text, Style: s})
}

// String returns the line's text.
func (l Line) String() string {
	var b strings.Builder
	for _, s := range l {
		b.WriteString(s.Text)
	}
	return b.String()
}

// width is the line's width in cells, counting a rune as one cell (the
// names and cells of Kubernetes objects are ASCII in practice).
func (l Line) width() int {
	n := 0
	for _, s := range l {
		n += utf8.RuneCountInString(s.Text)
	}
	return n
}

// clip cuts the line to at most w cells.
func (l Line) clip(w int) Line {
	var out Line
	for _, s := range l {
		if w <= 0 {
			break
		}
		if n := utf8.RuneCountInString(s.Text); n > w {
			s.Text = truncate(s.Text, w)
		}
		w -= utf8.RuneCountInString(s.Text)
		out = append(out, s)
	}
	return out
}

// truncate cuts s to w runes, the last one an ellipsis when it cut.
func truncate(s string, w int) string {
	if utf8.RuneCountInString(s) <= w {
		return s
	}
	if w <= 0 {
		return ""
	}
	r := []rune(s)
	return string(r[:w-1]) + "…"
}

// Frame is one screen as Render draws it: exactly Height lines, none wider
// than Width. It is a plain value, owned by whoever asked for it.
type Frame struct {
	Width, Height int
	Lines         []Line
}

// String returns the frame's text, one line per screen line, trailing
// spaces removed: what a terminal capture shows.
func (f Frame) String() string {
	var b strings.Builder
	for _, l := range f.Lines {
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}
