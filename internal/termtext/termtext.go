// Package termtext makes text from outside the process (a server's Status
// message, an exec plugin's stderr, an error that quotes either) safe to
// print on a terminal or serve as text: one function, Escape, used
// wherever such text is shown.
//
// A terminal obeys control characters in what it prints: ESC starts
// sequences that move the cursor, rewrite the screen, set the window
// title or, on some terminals, answer back into the input; CR and BS
// overwrite what was printed. Escape shows each as a visible escape
// instead, and leaves everything else as it is, so ordinary text, UTF-8
// included, prints exactly as kubectl prints it.
package termtext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every character that could drive a terminal shown
// as an escape: C0 controls other than tab and newline and DEL as \xNN,
// C1 controls (U+0080-U+009F, which some terminals read as ESC sequences)
// and the bidirectional overrides and isolates (which reorder what is
// shown) as \uNNNN, and each byte of invalid UTF-8 as \xNN. Tab and
// newline are kept: they move the cursor only as text does, and callers
// that want one line fold them (strings.Fields). Backslashes are kept, so
// the result is for reading, not for unquoting. s itself is returned when
// nothing needs escaping, which is the ordinary case and costs no
// allocation. Escape(Escape(s)) == Escape(s).
func Escape(s string) string {
	i := firstUnsafe(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && unsafeRune(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// firstUnsafe is the index of the first byte Escape changes, -1 if none.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafeRune(rune(c)) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafeRune(r) {
			return i
		}
		i += n
	}
	return -1
}

// unsafeRune reports whether r is a control Escape shows escaped.
func unsafeRune(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || r == 0x7f:
		return true // C0 and DEL
	case r >= 0x80 && r <= 0x9f:
		return true // C1
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidi embeddings, overrides and isolates
	}
	return false
}
