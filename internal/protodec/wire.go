package protodec

import (
	"bytes"
	"errors"
)

// errNotCanonical says the message holds something the generated decoder
// must read instead: the caller decodes it again that way.
var errNotCanonical = errors.New("protodec: message outside the decoded subset")

// Wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// varint reads the varint at b[i:]: its value and the index after it, or
// ok false when it is truncated or longer than 10 bytes, or its tenth byte
// carries more than the value's top bit (the generated decoder drops such
// bits, which is for it to do).
func varint(b []byte, i int) (v uint64, next int, ok bool) {
	if i < len(b) && b[i] < 0x80 { // most tags and lengths: one byte
		return uint64(b[i]), i + 1, true
	}
	for shift := uint(0); shift < 70; shift += 7 {
		if i >= len(b) {
			return 0, 0, false
		}
		c := b[i]
		i++
		if shift == 63 && c > 1 {
			return 0, 0, false
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, i, true
		}
	}
	return 0, 0, false
}

// tag reads a field's tag at b[i:]: its number (1 to 2^31-1) and wire
// type, and the index after it.
func tag(b []byte, i int) (num uint64, wire uint8, next int, ok bool) {
	v, next, ok := varint(b, i)
	if !ok || v>>3 == 0 || v>>3 > 1<<31-1 {
		return 0, 0, 0, false
	}
	return v >> 3, uint8(v & 7), next, true
}

// span reads a length-delimited field's length at b[i:] and returns where
// its content starts and ends.
func span(b []byte, i int) (from, to int, ok bool) {
	n, from, ok := varint(b, i)
	if !ok || n > uint64(len(b)-from) {
		return 0, 0, false
	}
	return from, from + int(n), true
}

// skip returns the index after the value of a field of wire type wire
// starting at b[i:] (an unknown field, which the generated decoder skips
// too); groups and unknown wire types are not skipped.
func skip(b []byte, i int, wire uint8) (int, bool) {
	switch wire {
	case wireVarint:
		_, next, ok := varint(b, i)
		return next, ok
	case wireFixed64:
		return i + 8, len(b)-i >= 8
	case wireFixed32:
		return i + 4, len(b)-i >= 4
	case wireBytes:
		_, to, ok := span(b, i)
		return to, ok
	}
	return 0, false
}

// run counts the entries of the repeated field whose first entry's tag
// starts at b[i:]: the fields in a row from there under the same tag bytes,
// which encoders write together. It is a size to make a slice or map at,
// not a count anything relies on: an entry apart from the run, or under a
// tag written otherwise, is added all the same.
func run(b []byte, i int) int {
	_, wire, next, ok := tag(b, i)
	if !ok {
		return 0
	}
	t := b[i:next]
	n := 0
	for bytes.HasPrefix(b[i:], t) {
		if i, ok = skip(b, i+len(t), wire); !ok {
			break
		}
		n++
	}
	return n
}

// maxMapSize bounds the size a map is made at from its run of entries.
// A slice made at its run's length holds every entry of the run, but a
// map holds one per key: entries that repeat a key would make a map far
// larger than what it keeps, and than what the generated code, which
// grows its maps by inserting, makes of the same bytes. Past the bound a
// map grows as it fills.
const maxMapSize = 1 << 10

// mapSize is the size to make the map whose run of entries starts at b[at:].
func mapSize(b []byte, at int) int { return min(run(b, at), maxMapSize) }
