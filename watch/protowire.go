package watch

import (
	"errors"
	"fmt"

	"github.com/kwatch/kwatch/internal/pbwire"
)

// The protobuf messages watch reads itself, around the objects' own
// generated Unmarshal methods; internal/pbwire describes the encoding.

// readWatchEvent reads a metav1.WatchEvent: its type and the enveloped
// object. typ aliases nothing: known types are constants.
func readWatchEvent(b []byte) (typ EventType, obj []byte, err error) {
	hasType := false
	err = pbwire.EachBytesField(b, func(num int, data []byte) {
		switch num {
		case 1:
			typ, hasType = internType(data), true
		case 2:
			obj = pbwire.RawExtension(data)
		}
	})
	switch {
	case err != nil:
		return "", nil, err
	case !hasType:
		return "", nil, fmt.Errorf("%w: the event has no type", ErrUnknownEventType)
	case !typ.Valid():
		return "", nil, fmt.Errorf("%w %q", ErrUnknownEventType, clip(string(typ)))
	case obj == nil:
		return typ, nil, errors.New("the event has no object")
	}
	return typ, obj, nil
}

// readListMeta reads a metav1.ListMeta into meta.
func readListMeta(b []byte, meta *ListMeta) error {
	s := pbwire.NewScanner(b)
	var f pbwire.Field
	for s.Next(&f) {
		switch {
		case f.Num == 2 && f.Wire == pbwire.Bytes:
			meta.ResourceVersion = string(f.Data)
		case f.Num == 3 && f.Wire == pbwire.Bytes:
			meta.Continue = string(f.Data)
		case f.Num == 4 && f.Wire == pbwire.Varint:
			n := int64(f.Val)
			meta.RemainingItemCount = &n
		}
	}
	return s.Err()
}
