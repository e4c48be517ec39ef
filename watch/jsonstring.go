package watch

import (
	"fmt"
	"reflect"
	"unicode/utf8"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
)

// JSON strings are decoded as Kubernetes' own JSON decoder
// (sigs.k8s.io/json, a fork of encoding/json) decodes them, so that an
// object read by kwatch holds the strings the API server's clients see:
//   - Each byte that is not part of valid UTF-8 becomes U+FFFD, one per
//     byte, as utf8.DecodeRune reports them (a surrogate half written in
//     UTF-8, ED A0 80, is three bytes and three U+FFFD).
//   - \uXXXX escapes of a valid surrogate pair decode to the pair's rune;
//     a lone surrogate becomes U+FFFD, and what follows it is read on its
//     own (so "\ud800\ud800\udc00" is U+FFFD U+10000).
//   - A control byte (below 0x20) or an unknown escape is an error.
//
// This applies to every string decoded into a field of kind string, map
// keys and values included, and to strings inside interface{} values. Raw
// JSON kept as bytes (metav1.FieldsV1, json.RawMessage) is kept as sent, as
// Kubernetes keeps it. Protobuf strings are kept as sent too: generated
// Unmarshal code does not check UTF-8.
//
// The intern table holds only valid UTF-8 (see internTable.lookup), so a
// string found there needs no check: validation costs only on a miss.

// replaceInvalidUTF8 returns b with each byte that is not part of valid
// UTF-8 replaced by U+FFFD. b must not be valid UTF-8 already (callers
// check first; the result would be a needless copy).
func replaceInvalidUTF8(b []byte) string {
	out := make([]byte, 0, len(b)+2*8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// validString returns s, or a copy with invalid UTF-8 replaced.
func validString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return replaceInvalidUTF8(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// unquoteJSON decodes the body of a JSON string, the bytes between its
// quotes, into dst, which it returns extended.
func unquoteJSON(dst, s []byte) ([]byte, error) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			var err error
			if dst, i, err = unescapeJSON(dst, s, i); err != nil {
				return nil, err
			}
		case c < 0x20:
			return nil, fmt.Errorf("invalid control character 0x%02x at byte %d of a string", c, i)
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		}
	}
	return dst, nil
}

// unescapeJSON decodes the escape at s[i] (a backslash) and returns dst
// extended and the index after the escape.
func unescapeJSON(dst, s []byte, i int) ([]byte, int, error) {
	bad := func() ([]byte, int, error) {
		end := min(i+6, len(s))
		return nil, 0, fmt.Errorf("invalid escape %q at byte %d of a string", s[i:end], i)
	}
	if i+1 >= len(s) {
		return bad()
	}
	switch c := s[i+1]; c {
	case '"', '\\', '/':
		return append(dst, c), i + 2, nil
	case 'b':
		return append(dst, '\b'), i + 2, nil
	case 'f':
		return append(dst, '\f'), i + 2, nil
	case 'n':
		return append(dst, '\n'), i + 2, nil
	case 'r':
		return append(dst, '\r'), i + 2, nil
	case 't':
		return append(dst, '\t'), i + 2, nil
	case 'u':
	default:
		return bad()
	}
	r, ok := hex4(s[i+2:])
	if !ok {
		return bad()
	}
	i += 6
	if r < 0xd800 || r > 0xdfff {
		return utf8.AppendRune(dst, r), i, nil
	}
	// A surrogate: a high half followed by an escaped low half is one
	// rune; anything else is U+FFFD, and what follows is read on its own.
	if r < 0xdc00 && i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
		if lo, ok := hex4(s[i+2:]); ok && lo >= 0xdc00 && lo <= 0xdfff {
			return utf8.AppendRune(dst, 0x10000+(r-0xd800)<<10+(lo-0xdc00)), i + 6, nil
		}
	}
	return utf8.AppendRune(dst, utf8.RuneError), i, nil
}

// hex4 reads four hex digits.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// readEscapedString reads the JSON string at the iterator's position,
// one that plainStringBytes refused (it has escapes or control bytes),
// decoding it as Kubernetes does. The result is valid UTF-8 and a string
// of its own. Errors are reported on iter.
//
// Without access to the buffer, or for a string that does not lie whole in
// it (an iterator reading from an io.Reader; the package's own decoders
// always hand it whole values), it falls back to json-iterator's reading
// with the invalid bytes replaced afterwards. That differs from
// Kubernetes only for a high surrogate escape followed by another
// surrogate escape: "\ud800\ud800\udc00" gives three U+FFFD there.
func readEscapedString(iter *jsoniter.Iterator) string {
	if !iterLayout.ok {
		return validString(iter.ReadString())
	}
	base := unsafe.Pointer(iter)
	buf := *(*[]byte)(unsafe.Add(base, iterLayout.buf))
	head := (*int)(unsafe.Add(base, iterLayout.head))
	tail := *(*int)(unsafe.Add(base, iterLayout.tail))
	if *head >= tail || buf[*head] != '"' {
		return validString(iter.ReadString()) // reports what is wrong
	}
	for i := *head + 1; i < tail; i++ {
		switch buf[i] {
		case '\\':
			i++ // the escaped byte cannot end the string
		case '"':
			out, err := unquoteJSON(make([]byte, 0, i-*head), buf[*head+1:i])
			if err != nil {
				iter.ReportError("read string", err.Error())
				return ""
			}
			*head = i + 1
			return unsafe.String(unsafe.SliceData(out), len(out))
		}
	}
	return validString(iter.ReadString())
}

// anyDecoder decodes into an empty interface as json-iterator does
// (objects as map[string]any, arrays as []any, numbers as float64), except
// that objects and arrays are decoded through this configuration, so their
// keys and strings are decoded as above, and interned, instead of by
// json-iterator's own string reading.
type anyDecoder struct{}

func (anyDecoder) Decode(ptr unsafe.Pointer, iter *jsoniter.Iterator) {
	p := (*any)(ptr)
	if *p != nil && reflect.TypeOf(*p).Kind() == reflect.Pointer && !reflect.ValueOf(*p).IsNil() {
		iter.ReadVal(*p) // an interface holding a pointer decodes into it, as encoding/json does
		return
	}
	switch iter.WhatIsNext() {
	case jsoniter.StringValue:
		var s string
		stringDecoder{}.Decode(unsafe.Pointer(&s), iter)
		*p = s
	case jsoniter.ObjectValue:
		m := map[string]any{}
		iter.ReadVal(&m)
		*p = m
	case jsoniter.ArrayValue:
		var a []any
		iter.ReadVal(&a)
		*p = a
	default:
		*p = iter.Read() // numbers, booleans, null; an error otherwise
	}
}
