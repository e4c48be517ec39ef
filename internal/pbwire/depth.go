package pbwire

import "fmt"

// DepthError says that a message nests deeper than a limit.
type DepthError struct {
	Limit  int // the most levels allowed, the outer message being level 1
	Offset int // of the first byte of the message one level too deep
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("protobuf messages nest deeper than the %d-level limit (at byte %d)", e.Limit, e.Offset)
}

// CheckDepth returns a *DepthError when the message b may nest deeper than
// limit levels. It reads b as a generated decoder would with every
// length-delimited field taken for a message, in order, stopping inside a
// field's content where that content stops parsing as a message (it is
// then a string or bytes, or malformed, which the decoder itself reports);
// content one level past the limit counts if it starts with a field.
// A generated decoder recurses once per nested message, so a message that
// passes cannot take it more than one call past limit (into a content it
// then refuses at its first byte), whatever its type; one
// that fails can be a string shaped like deep messages, refused with the
// object that holds it.
//
// The cost is linear in len(b): each byte is read as a field header at
// most once, at the one level where it is not inside a nested field's
// content. The recursion is bounded by limit.
func CheckDepth(b []byte, limit int) error {
	return checkDepth(b, 0, 1, limit)
}

// checkDepth checks the message b, found at offset base of the outermost
// message and nested depth levels deep.
func checkDepth(b []byte, base, depth, limit int) error {
	s := NewScanner(b)
	var f Field
	if depth > limit {
		// One level too deep: a decoder taking b for a message would read
		// its first field here, and go on from there. If b does not start
		// with a field it stops at once (b is then a string, or damage).
		if s.Next(&f) {
			return &DepthError{Limit: limit, Offset: base}
		}
		return nil
	}
	for s.Next(&f) {
		if f.Wire != Bytes {
			continue
		}
		if err := checkDepth(f.Data, base+s.i-len(f.Data), depth+1, limit); err != nil {
			return err
		}
	}
	return nil
}
