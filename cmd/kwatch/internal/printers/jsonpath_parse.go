package printers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// stepKind is one step of a path: {.a[0]..b} is field, index, recursive,
// field.
type stepKind int

const (
	stepRoot      stepKind = iota // $
	stepCurrent                   // @ or a lone "."
	stepField                     // .name or ['name']
	stepWildcard                  // .* or [*]
	stepRecursive                 // ..: the next step applies at every depth
	stepIndex                     // [n] and [n,m]
	stepSlice                     // [start:end:step]
	stepKeys                      // ['a','b']
	stepFilter                    // [?(...)]
	stepPath                      // ['a.b']: the fields a, then b
)

type step struct {
	kind    stepKind
	name    string
	keys    []string
	indexes []int
	slice   [3]*int // start, end, step; nil when left out
	filter  *filter
	path    []string // stepPath's fields
}

// filter is ?(left op right) or ?(left): right is a literal or a path.
type filter struct {
	left      []step
	op        string // "" tests existence
	right     []step
	lit       any
	rightPath bool
}

// tparser reads a template.
type tparser struct {
	src string
	pos int
}

// nodes reads template nodes up to the end or, inRange, up to {end}.
func (p *tparser) nodes(inRange bool) ([]tnode, error) {
	var out []tnode
	for p.pos < len(p.src) {
		open := strings.IndexByte(p.src[p.pos:], '{')
		if open < 0 {
			out = append(out, tnode{text: p.src[p.pos:]})
			p.pos = len(p.src)
			break
		}
		if open > 0 {
			out = append(out, tnode{text: p.src[p.pos : p.pos+open]})
		}
		start := p.pos + open + 1
		end, err := closing(p.src, start)
		if err != nil {
			return nil, err
		}
		inner := strings.TrimSpace(p.src[start:end])
		p.pos = end + 1
		switch {
		case inner == "end":
			if !inRange {
				return nil, fmt.Errorf("offset %d: {end} without {range}", start)
			}
			return out, nil
		case strings.HasPrefix(inner, "range ") || strings.HasPrefix(inner, "range\t"):
			path, err := parsePath(strings.TrimSpace(inner[len("range"):]))
			if err != nil {
				return nil, fmt.Errorf("offset %d: %w", start, err)
			}
			body, err := p.nodes(true)
			if err != nil {
				return nil, err
			}
			out = append(out, tnode{isRange: true, path: path, body: body})
		case strings.HasPrefix(inner, `"`):
			s, err := strconv.Unquote(inner)
			if err != nil {
				return nil, fmt.Errorf("offset %d: bad string literal %s", start, inner)
			}
			out = append(out, tnode{text: s, literal: true})
		case inner == "":
			return nil, fmt.Errorf("offset %d: empty expression {}", start)
		default:
			path, err := parsePath(inner)
			if err != nil {
				return nil, fmt.Errorf("offset %d: %w", start, err)
			}
			out = append(out, tnode{path: path})
		}
	}
	if inRange {
		return nil, errors.New("{range} without {end}")
	}
	return out, nil
}

// closing finds the '}' that ends the expression starting at start,
// skipping quoted strings.
func closing(s string, start int) (int, error) {
	var quote byte
	for i := start; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'':
			quote = c
		case c == '}':
			return i, nil
		}
	}
	return 0, fmt.Errorf("offset %d: unclosed {", start-1)
}

// parsePath reads "$.a.b[0]", "@.x", ".items[*].metadata.name", "..name",
// "kind" (a first field without its dot).
func parsePath(s string) ([]step, error) {
	var steps []step
	i := 0
	if i < len(s) && (s[i] == '$' || s[i] == '@') {
		steps = append(steps, step{kind: map[byte]stepKind{'$': stepRoot, '@': stepCurrent}[s[i]]})
		i++
	}
	for i < len(s) {
		switch {
		case strings.HasPrefix(s[i:], ".."):
			steps = append(steps, step{kind: stepRecursive})
			i += 2
			if i < len(s) && s[i] != '[' && s[i] != '*' {
				name, n := fieldName(s[i:])
				steps = append(steps, step{kind: stepField, name: name})
				i += n
			} else if i < len(s) && s[i] == '*' {
				steps = append(steps, step{kind: stepWildcard})
				i++
			}
		case s[i] == '.':
			i++
			switch {
			case i < len(s) && s[i] == '*':
				steps = append(steps, step{kind: stepWildcard})
				i++
			case i >= len(s) || s[i] == '[':
				if len(steps) == 0 {
					steps = append(steps, step{kind: stepCurrent})
				}
			default:
				name, n := fieldName(s[i:])
				if n == 0 {
					return nil, fmt.Errorf("%q: a field name must follow '.' at offset %d", s, i)
				}
				steps = append(steps, step{kind: stepField, name: name})
				i += n
			}
		case s[i] == '[':
			end, err := bracketEnd(s, i)
			if err != nil {
				return nil, err
			}
			st, err := parseBracket(s[i+1 : end])
			if err != nil {
				return nil, fmt.Errorf("%q: %w", s, err)
			}
			steps = append(steps, st)
			i = end + 1
		case i == 0 || len(steps) == 1 && steps[0].kind != stepField && i == 1:
			name, n := fieldName(s[i:])
			if n == 0 {
				return nil, fmt.Errorf("%q: unexpected %q at offset %d", s, s[i], i)
			}
			steps = append(steps, step{kind: stepField, name: name})
			i += n
		default:
			return nil, fmt.Errorf("%q: unexpected %q at offset %d", s, s[i], i)
		}
	}
	return steps, nil
}

// fieldName reads a field name up to '.', '[' or the end; "\." is a dot
// inside the name. It returns the name and the bytes read.
func fieldName(s string) (string, int) {
	var b strings.Builder
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			b.WriteByte(s[i+1])
			i += 2
			continue
		}
		if c == '.' || c == '[' || c == ' ' || c == ')' || c == '=' || c == '!' || c == '<' || c == '>' {
			break
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), i
}

// bracketEnd finds the ']' closing the '[' at s[open], past quotes and
// nested parentheses and brackets of a filter.
func bracketEnd(s string, open int) (int, error) {
	depth := 0
	var quote byte
	for i := open; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '(':
			depth++
		case c == ']' || c == ')':
			depth--
			if depth == 0 && c == ']' {
				return i, nil
			}
		}
	}
	return 0, fmt.Errorf("%q: unclosed [ at offset %d", s, open)
}

// parseBracket reads what is inside [...].
func parseBracket(in string) (step, error) {
	in = strings.TrimSpace(in)
	switch {
	case in == "*":
		return step{kind: stepWildcard}, nil
	case strings.HasPrefix(in, "?(") && strings.HasSuffix(in, ")"):
		f, err := parseFilter(strings.TrimSpace(in[2 : len(in)-1]))
		return step{kind: stepFilter, filter: f}, err
	case strings.HasPrefix(in, "'") || strings.HasPrefix(in, `"`):
		var keys []string
		for _, part := range splitOutsideQuotes(in, ',') {
			k, err := unquote(strings.TrimSpace(part))
			if err != nil {
				return step{}, err
			}
			keys = append(keys, k)
		}
		if len(keys) == 1 {
			// As kubectl reads it, a dot inside the quotes still separates
			// fields: ['metadata.name'] is .metadata.name, and
			// ['example.com/x'] looks for "example" then "com/x" (write
			// .example\.com/x for a key with dots).
			return step{kind: stepPath, path: strings.Split(keys[0], ".")}, nil
		}
		return step{kind: stepKeys, keys: keys}, nil
	case strings.Contains(in, ":"):
		parts := strings.Split(in, ":")
		if len(parts) > 3 {
			return step{}, fmt.Errorf("bad slice [%s]", in)
		}
		st := step{kind: stepSlice}
		for k, part := range parts {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			n, err := strconv.Atoi(part)
			if err != nil {
				return step{}, fmt.Errorf("bad slice [%s]: %q is not a number", in, part)
			}
			st.slice[k] = &n
		}
		return st, nil
	}
	st := step{kind: stepIndex}
	for _, part := range strings.Split(in, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return step{}, fmt.Errorf("bad index [%s]", in)
		}
		st.indexes = append(st.indexes, n)
	}
	return st, nil
}

func unquote(s string) (string, error) {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], `\'`, `'`), nil
	}
	u, err := strconv.Unquote(s)
	if err != nil {
		return "", fmt.Errorf("bad quoted key %s", s)
	}
	return u, nil
}

func splitOutsideQuotes(s string, sep byte) []string {
	var parts []string
	var quote byte
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'':
			quote = c
		case c == sep:
			parts = append(parts, s[last:i])
			last = i + 1
		}
	}
	return append(parts, s[last:])
}

var filterOps = []string{"==", "!=", "<=", ">=", "<", ">"}

// parseFilter reads "@.a.b == 'x'", "@.n > 2", "@.ready".
func parseFilter(s string) (*filter, error) {
	for _, op := range filterOps {
		parts := splitOp(s, op)
		if parts == nil {
			continue
		}
		left, err := parsePath(strings.TrimSpace(parts[0]))
		if err != nil {
			return nil, err
		}
		f := &filter{left: left, op: op}
		right := strings.TrimSpace(parts[1])
		switch {
		case strings.HasPrefix(right, "@") || strings.HasPrefix(right, "$"):
			if f.right, err = parsePath(right); err != nil {
				return nil, err
			}
			f.rightPath = true
		case strings.HasPrefix(right, "'") || strings.HasPrefix(right, `"`):
			if f.lit, err = unquote(right); err != nil {
				return nil, err
			}
		case right == "true" || right == "false":
			f.lit = right == "true"
		default:
			if n, err := strconv.ParseInt(right, 10, 64); err == nil {
				f.lit = n
			} else if x, err := strconv.ParseFloat(right, 64); err == nil {
				f.lit = x
			} else {
				return nil, fmt.Errorf("filter ?(%s): %q is not a string, number, boolean or path", s, right)
			}
		}
		return f, nil
	}
	left, err := parsePath(s)
	if err != nil {
		return nil, err
	}
	return &filter{left: left}, nil
}

// splitOp splits s at the first op outside quotes, nil if none.
func splitOp(s, op string) []string {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'':
			quote = c
		case strings.HasPrefix(s[i:], op):
			// "<" must not be the start of "<=", and so on.
			if len(op) == 1 && i+1 < len(s) && s[i+1] == '=' {
				continue
			}
			if len(op) == 1 && i > 0 && (s[i-1] == '<' || s[i-1] == '>' || s[i-1] == '!' || s[i-1] == '=') {
				continue
			}
			return []string{s[:i], s[i+len(op):]}
		}
	}
	return nil
}
