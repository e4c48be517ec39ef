package sim

import (
	stdjson "encoding/json"
	"sort"
	"strconv"
	"time"

	jsoniter "github.com/json-iterator/go"
)

// json is the codec for request bodies and generic objects: standard-library
// compatible with sorted map keys, so encodings are deterministic, and numbers kept
// as written (UseNumber), so int64 fields survive a round trip.
var json = jsoniter.Config{
	EscapeHTML: true, SortMapKeys: true, ValidateJsonRawMessage: true, UseNumber: true,
}.Froze()

// object is one stored version of an object. It is immutable once committed and
// shared by the current state, the history and every response that serves it.
type object struct {
	key       string
	namespace string
	name      string
	uid       string
	rv        uint64
	created   time.Time
	// raw is the complete JSON object, encoded once per write.
	raw []byte
	// raw[rvOff:rvOff+rvLen] are the decimal resourceVersion digits, so a copy at
	// another resourceVersion (a DELETED event) is a splice, not a re-encode.
	rvOff, rvLen int
	// raw[metaOff:metaEnd] is the metadata object, for PartialObjectMetadata output.
	metaOff, metaEnd int
	labels           map[string]string
	fields           map[string]string
	generation       int64
	specSum          uint64 // hash of the encoded spec, to bump generation on change
	// pod holds what the pods Table needs; nil for other resources.
	pod *podSummary
}

// encoded is an object body before its resourceVersion is known: the digits go at
// buf[rvAt]. metaOff/metaEnd are offsets in buf (metaEnd is after rvAt).
type encoded struct {
	buf              []byte
	rvAt             int
	metaOff, metaEnd int
}

// commit returns the final bytes with rv inserted and the adjusted offsets.
func (e *encoded) commit(o *object, rv uint64) {
	var digits [20]byte
	d := strconv.AppendUint(digits[:0], rv, 10)
	// Insert in place: encoders leave spare capacity, so this rarely reallocates.
	n := len(e.buf)
	raw := append(e.buf, d...)
	copy(raw[e.rvAt+len(d):], raw[e.rvAt:n])
	copy(raw[e.rvAt:], d)
	e.buf = nil // raw now owns the bytes
	o.raw, o.rv = raw, rv
	o.rvOff, o.rvLen = e.rvAt, len(d)
	o.metaOff, o.metaEnd = e.metaOff, e.metaEnd+len(d)
}

// withRV returns a copy of o whose body carries resourceVersion rv (used for the
// DELETED event of a deletion and for objects leaving a watcher's selector).
func (o *object) withRV(rv uint64) *object {
	c := *o
	e := encoded{rvAt: o.rvOff, metaOff: o.metaOff, metaEnd: o.metaEnd - o.rvLen}
	e.buf = make([]byte, 0, len(o.raw)+4)
	e.buf = append(e.buf, o.raw[:o.rvOff]...)
	e.buf = append(e.buf, o.raw[o.rvOff+o.rvLen:]...)
	e.commit(&c, rv)
	return &c
}

// meta returns the metadata JSON object.
func (o *object) meta() []byte { return o.raw[o.metaOff:o.metaEnd] }

// metaKeyOrder is the order the real server writes ObjectMeta fields in; other keys
// follow alphabetically.
var metaKeyOrder = []string{
	"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
	"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
	"annotations", "ownerReferences", "finalizers", "managedFields",
}

// topKeyOrder puts spec before status, as typed objects do; other keys follow alphabetically.
var topKeyOrder = []string{"spec", "status"}

// encodeGeneric encodes a decoded object with kind and apiVersion first, metadata
// next (resourceVersion left for commit) and the rest in a stable order.
func encodeGeneric(ri *ResourceInfo, m map[string]any) (encoded, error) {
	var e encoded
	b := make([]byte, 0, 1024)
	b = append(b, `{"kind":`...)
	b = appendQuoted(b, ri.Kind)
	b = append(b, `,"apiVersion":`...)
	b = appendQuoted(b, ri.apiVersion())
	b = append(b, `,"metadata":`...)
	e.metaOff = len(b)
	meta, _ := m["metadata"].(map[string]any)
	var err error
	b, err = appendOrdered(b, meta, metaKeyOrder, &e.rvAt)
	if err != nil {
		return e, err
	}
	e.metaEnd = len(b)
	rest := make(map[string]any, len(m))
	for k, v := range m {
		if k != "kind" && k != "apiVersion" && k != "metadata" {
			rest[k] = v
		}
	}
	if len(rest) > 0 {
		start := len(b)
		if b, err = appendOrdered(b, rest, topKeyOrder, nil); err != nil {
			return e, err
		}
		b[start] = ',' // splice the members into the outer object
		b = b[:len(b)-1]
	}
	e.buf = append(b, '}')
	return e, nil
}

// appendOrdered writes m as a JSON object with the keys in order first. When rvAt is
// not nil, "resourceVersion" is written as an empty string whose digits position is
// stored in *rvAt (the key is always written).
func appendOrdered(b []byte, m map[string]any, order []string, rvAt *int) ([]byte, error) {
	b = append(b, '{')
	first := true
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	seen := make(map[string]bool, len(order))
	writeKV := func(k string, v any) error {
		sep()
		b = appendQuoted(b, k)
		b = append(b, ':')
		if rvAt != nil && k == "resourceVersion" {
			b = append(b, '"')
			*rvAt = len(b)
			b = append(b, '"')
			return nil
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return err
		}
		b = append(b, enc...)
		return nil
	}
	for _, k := range order {
		seen[k] = true
		v, ok := m[k]
		if k == "resourceVersion" && rvAt != nil {
			ok = true
		}
		if !ok {
			continue
		}
		if err := writeKV(k, v); err != nil {
			return b, err
		}
	}
	rest := make([]string, 0, len(m))
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		if err := writeKV(k, m[k]); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendQuoted appends s as a JSON string.
func appendQuoted(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func quote(s string) string { return string(appendQuoted(nil, s)) }

// stringMap converts a decoded JSON object of strings (labels, annotations); other
// value types are dropped, as validation would reject them anyway.
func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		if s, ok := x.(string); ok {
			out[k] = s
		}
	}
	return out
}

// lookupPath returns the string form of the value at a dotted path of m, "" if absent.
func lookupPath(m map[string]any, path string) string {
	var cur any = m
	start := 0
	for i := 0; i <= len(path); i++ {
		if i < len(path) && path[i] != '.' {
			continue
		}
		mm, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = mm[path[start:i]]
		start = i + 1
	}
	switch v := cur.(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case stdjson.Number:
		return v.String()
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// fieldsOf extracts the field-selector values of a decoded object.
func fieldsOf(r *resource, m map[string]any, ns, name string) map[string]string {
	f := make(map[string]string, len(r.fieldSet))
	for path := range r.fieldSet {
		f[path] = lookupPath(m, path)
	}
	f["metadata.name"], f["metadata.namespace"] = name, ns
	if r.info.key() == "pods" && f["spec.hostNetwork"] == "" {
		f["spec.hostNetwork"] = "false"
	}
	return f
}

// formatTime renders a timestamp as the API does (RFC 3339, UTC, seconds).
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
