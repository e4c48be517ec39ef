package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Arrow separates the old value from the new in a printed change.
const Arrow = " → "

// maxValue bounds a value as printed, in runes: a changed annotation can
// hold a whole object (kubectl's last-applied-configuration), and one line
// per field is the point.
const maxValue = 200

// Style paints the parts of a printed change; the zero value paints
// nothing. Each field wraps a part's text (for example in ANSI colours).
type Style struct {
	Path, Old, New, Note func(string) string
}

// ANSI is the terminal's colours: the path plain, old values red, new ones
// green, notes dim.
var ANSI = Style{
	Old:  func(s string) string { return "\x1b[31m" + s + "\x1b[0m" },
	New:  func(s string) string { return "\x1b[32m" + s + "\x1b[0m" },
	Note: func(s string) string { return "\x1b[2m" + s + "\x1b[0m" },
}

func paint(f func(string) string, s string) string {
	if f == nil {
		return s
	}
	return f(s)
}

// String is the change as one line without colours:
// "spec.replicas: 3 → 5", "metadata.labels.app: (added) web",
// "spec.paused: (removed) true".
func (c Change) String() string { return c.Format(Style{}) }

// Format is the change as one line painted with st.
func (c Change) Format(st Style) string {
	p := paint(st.Path, c.Path) + ": "
	switch c.Op {
	case Added:
		return p + paint(st.Note, "(added)") + " " + paint(st.New, Value(c.New))
	case Removed:
		return p + paint(st.Note, "(removed)") + " " + paint(st.Old, Value(c.Old))
	}
	return p + paint(st.Old, Value(c.Old)) + Arrow + paint(st.New, Value(c.New))
}

// Value is a decoded JSON value as a change prints it: a string as itself
// when it cannot be read as anything else ("Running", "nginx:1.27"), else
// quoted as JSON ("", "5", "a → b", one with a newline or a terminal
// control character); numbers, booleans and null as JSON; maps and lists
// as compact JSON. Longer than maxValue runes, it is cut with a note of
// how much was left out.
func Value(v any) string {
	var s string
	switch v := v.(type) {
	case string:
		s = v
		if !bare(v) {
			s = quote(v)
		}
	case json.Number:
		s = v.String()
	default:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			s = fmt.Sprint(v)
		} else {
			s = strings.TrimSuffix(b.String(), "\n")
		}
	}
	s = escapeControls(s)
	if n := utf8.RuneCountInString(s); n > maxValue {
		r := []rune(s)
		s = string(r[:maxValue]) + fmt.Sprintf("… (%d more characters)", n-maxValue)
	}
	return s
}

// bare: s prints unquoted without being mistaken for another value: not
// empty, no space at either end, every rune printable, not JSON of another
// type (5, true, null, {…}, […], "…"), not the arrow or a note.
func bare(s string) bool {
	if s == "" || strings.TrimSpace(s) != s || strings.Contains(s, Arrow) || strings.HasPrefix(s, "(") {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	switch s[0] {
	case '"', '{', '[':
		return false
	}
	var v any
	return json.Unmarshal([]byte(s), &v) != nil
}

// escapeControls writes any rune that is not printable (what JSON's
// encoder leaves as is: DEL, C1 controls such as U+009B, the CSI of 8-bit
// terminals, line and paragraph separators) as \uXXXX, so that nothing
// from the server can drive the terminal.
func escapeControls(s string) string {
	clean := true
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsPrint(r) || r == ' ' {
			b.WriteRune(r)
			continue
		}
		if r > 0xffff {
			r = utf8.RuneError
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}
