package watch

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// scanJSONMeta checks that b is one JSON object and reads the metadata
// fields a Raw keeps. Field names are matched as the typed decoder matches
// them (exactly, case-sensitively, unescaped); strings are unescaped and
// invalid UTF-8 replaced as it does, so both store modes agree on keys.
func scanJSONMeta(b []byte, m *rawMeta) error {
	s := jscan{b: b}
	s.ws()
	if err := s.topObject(m); err != nil {
		return err
	}
	s.ws()
	if s.i != len(b) {
		return s.fail("data after the object")
	}
	return nil
}

// topObject reads the object at s.i, keeping its metadata in m.
func (s *jscan) topObject(m *rawMeta) error {
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return ErrRawNotObject
	}
	return s.object(func(key []byte) error {
		if string(key) == "metadata" {
			return s.metadata(m)
		}
		return s.skip(0)
	})
}

// scanRawJSON reads the object starting at b[start] into a new Raw and
// returns the index just after it.
func scanRawJSON(b []byte, start int) (*Raw, int, error) {
	var m rawMeta
	s := jscan{b: b, i: start}
	if err := s.topObject(&m); err != nil {
		return nil, 0, err
	}
	r := new(Raw)
	if err := r.fill(&m, b[start:s.i], false); err != nil {
		return nil, 0, err
	}
	return r, s.i, nil
}

// decodeRawJSON decodes the JSON object b into *obj when T is *Raw, with
// Raw's own scanner; ok is false for any other T.
func decodeRawJSON[T any](obj *T, b []byte) (ok bool, err error) {
	dst, ok := any(obj).(**Raw)
	if !ok {
		return false, nil
	}
	r := new(Raw)
	if err := r.UnmarshalJSON(b); err != nil {
		return true, err
	}
	*dst = r
	return true, nil
}

// jscan validates and walks JSON held in memory.
type jscan struct {
	b []byte
	i int
}

func (s *jscan) fail(what string) error {
	return fmt.Errorf("malformed JSON at byte %d: %s", s.i, what)
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object walks the object at s.i, calling fn with each key (raw, as
// written) with s.i at its value; fn must consume the value.
func (s *jscan) object(fn func(key []byte) error) error {
	s.i++ // '{'
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return nil
	}
	for {
		s.ws()
		key, _, err := s.str()
		if err != nil {
			return err
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return s.fail("expected ':'")
		}
		s.i++
		s.ws()
		if err := fn(key); err != nil {
			return err
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.fail("unterminated object")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.fail("expected ',' or '}'")
		}
	}
}

// str reads the string at s.i and returns its bytes between the quotes
// and whether they need unescaping or UTF-8 repair.
func (s *jscan) str() (raw []byte, special bool, err error) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, s.fail("expected a string")
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], special, nil
		case c == '\\':
			special = true
			j++
		case c < 0x20:
			s.i = j
			return nil, false, s.fail("control character in a string")
		case c >= utf8.RuneSelf:
			special = true
		}
	}
	return nil, false, s.fail("unterminated string")
}

// text reads a string value (or null) as the typed decoder would.
func (s *jscan) text() ([]byte, error) {
	if s.literal("null") {
		return nil, nil
	}
	raw, special, err := s.str()
	if err != nil || !special || utf8.Valid(raw) && bytes.IndexByte(raw, '\\') < 0 {
		return raw, err
	}
	return unquoteJSON(make([]byte, 0, len(raw)), raw)
}

func (s *jscan) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// skip steps over one value, checking its structure: strings end and hold
// no control characters, brackets match, nesting stays within
// MaxNestingDepth. It does not check the grammar between tokens (a missing
// comma passes): the typed decode on read does, and a value it refuses is
// counted there. It allocates nothing.
func (s *jscan) skip(depth int) error {
	if s.i >= len(s.b) {
		return s.fail("expected a value")
	}
	switch c := s.b[s.i]; {
	case c == '{' || c == '[':
		return s.skipNested(depth)
	case c == '"':
		_, _, err := s.str()
		return err
	case c == '-' || c >= '0' && c <= '9':
		_, err := s.number()
		return err
	case s.literal("true"), s.literal("false"), s.literal("null"):
		return nil
	}
	return s.fail("unexpected character")
}

// skipNested steps over the object or array at s.i, tracking the kinds of
// its open brackets in a bit stack.
func (s *jscan) skipNested(depth int) error {
	var open [MaxNestingDepth/64 + 1]uint64 // bit set: an array
	n := 0
	push := func(array bool) bool {
		if depth+n >= MaxNestingDepth {
			return false
		}
		if array {
			open[n/64] |= 1 << (n % 64)
		} else {
			open[n/64] &^= 1 << (n % 64)
		}
		n++
		return true
	}
	for s.i < len(s.b) {
		switch c := s.b[s.i]; c {
		case '{', '[':
			if !push(c == '[') {
				return s.fail(fmt.Sprintf("%v: more than %d levels", ErrNestingTooDeep, MaxNestingDepth))
			}
			s.i++
		case '}', ']':
			if n == 0 || (open[(n-1)/64]>>((n-1)%64)&1 == 1) != (c == ']') {
				return s.fail("mismatched bracket")
			}
			n--
			s.i++
			if n == 0 {
				return nil
			}
		case '"':
			if _, _, err := s.str(); err != nil {
				return err
			}
		default:
			s.i++
		}
	}
	return s.fail("unterminated value")
}

// number steps over a number and returns its text.
func (s *jscan) number() ([]byte, error) {
	start := s.i
	for s.i < len(s.b) && isNumberByte(s.b[s.i]) {
		s.i++
	}
	if s.i == start {
		return nil, s.fail("expected a number")
	}
	return s.b[start:s.i], nil
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// metadata reads the fields of metadata a Raw keeps.
func (s *jscan) metadata(m *rawMeta) error {
	if s.literal("null") {
		return nil
	}
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return s.fail("metadata is not an object")
	}
	return s.object(func(key []byte) error {
		var err error
		switch string(key) {
		case "name":
			m.name, err = s.text()
		case "namespace":
			m.ns, err = s.text()
		case "resourceVersion":
			m.rv, err = s.text()
		case "uid":
			m.uid, err = s.text()
		case "generation":
			err = s.generation(m)
		case "labels":
			err = s.labels(m)
		default:
			err = s.skip(1)
		}
		return err
	})
}

func (s *jscan) generation(m *rawMeta) error {
	if s.literal("null") {
		return nil
	}
	n, err := s.number()
	if err != nil {
		return err
	}
	if m.gen, err = strconv.ParseInt(string(n), 10, 64); err != nil {
		return s.fail("generation is not an integer")
	}
	return nil
}

func (s *jscan) labels(m *rawMeta) error {
	m.labels, m.labelBytes, m.index = m.labels[:0], 0, nil
	if s.literal("null") {
		return nil
	}
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return s.fail("labels is not an object")
	}
	return s.object(func(rawKey []byte) error {
		key := rawKey
		if bytes.IndexByte(rawKey, '\\') >= 0 || !utf8.Valid(rawKey) {
			var err error
			if key, err = unquoteJSON(nil, rawKey); err != nil {
				return err
			}
		}
		v, err := s.text()
		if err != nil {
			return err
		}
		m.addLabel(key, v)
		return nil
	})
}

// jsonRawMeta decodes the metadata of a JSON body.
func jsonRawMeta(body []byte) (*metav1.ObjectMeta, error) {
	var obj struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, errors.Join(errors.New("metadata does not decode"), err)
	}
	return &obj.Metadata, nil
}
