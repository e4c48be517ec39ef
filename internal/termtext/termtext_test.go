package termtext

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{`pods "web" is forbidden: User "a\b" cannot list`, `pods "web" is forbidden: User "a\b" cannot list`},
		{"héllo 日本語 🙂 – ok", "héllo 日本語 🙂 – ok"},
		{"line one\n\tline two", "line one\n\tline two"},
		{"red \x1b[31malert\x1b[0m", `red \x1b[31malert\x1b[0m`},
		{"title \x1b]0;pwned\x07", `title \x1b]0;pwned\x07`},
		{"over\rwrite\b", `over\x0dwrite\x08`},
		{"del\x7f nul\x00", `del\x7f nul\x00`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"bidi \u202eevil\u2069", `bidi \u202eevil\u2069`},
		{"bad \xff\xfe utf8 \xe2\x82", `bad \xff\xfe utf8 \xe2\x82`},
	}
	for _, tt := range tests {
		got := Escape(tt.in)
		assert.Equal(t, tt.want, got, "Escape(%q)", tt.in)
		assert.Equal(t, got, Escape(got), "idempotent for %q", tt.in)
	}
}

func TestEscapeKeepsOrdinaryTextWithoutAllocating(t *testing.T) {
	s := "Error from server (NotFound): pods \"web-1\" not found — ünïcødé"
	allocs := testing.AllocsPerRun(100, func() { _ = Escape(s) })
	assert.Zero(t, allocs)
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[2J", "\xff", "\u009b", "a\r\nb", "\u202e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Escape(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q is not valid UTF-8", s, got)
		}
		for _, r := range got {
			if unsafeRune(r) {
				t.Fatalf("Escape(%q) = %q keeps %U", s, got, r)
			}
		}
		if Escape(got) != got {
			t.Fatalf("Escape is not idempotent on %q", s)
		}
		if firstUnsafe(s) < 0 && got != s {
			t.Fatalf("Escape changed safe text %q", s)
		}
	})
}
