package jsonpatch

import (
	"fmt"
	"strings"
)

var (
	escaper   = strings.NewReplacer("~", "~0", "/", "~1")
	unescaper = strings.NewReplacer("~1", "/", "~0", "~")
)

// EscapeToken escapes an object member's name for a JSON pointer:
// ~ as ~0 and / as ~1.
func EscapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return escaper.Replace(s)
}

// Split splits a JSON pointer into its unescaped tokens; "" (the whole
// document) has none.
func Split(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("JSON pointer %q does not start with /", p)
	}
	toks := strings.Split(p[1:], "/")
	for i, s := range toks {
		if strings.Contains(s, "~") {
			toks[i] = unescaper.Replace(s)
		}
	}
	return toks, nil
}

// Join makes the JSON pointer of unescaped tokens.
func Join(toks []string) string {
	var b strings.Builder
	for _, s := range toks {
		b.WriteByte('/')
		b.WriteString(EscapeToken(s))
	}
	return b.String()
}
