package protodec

import (
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// timeOwn decodes the message b into the metav1.Time at p exactly as
// Time.Unmarshal does: a Timestamp of which only the seconds are kept,
// in the local zone. A pod holds a dozen; reading the Timestamp here
// spares each the call through an interface and the generated decoder.
// What it does not read as that decoder would (a field of another wire
// type, a varint with bits past 64) is errNotCanonical, and the caller
// decodes the object again with the generated code.
func timeOwn(p unsafe.Pointer, b []byte) error {
	t := (*metav1.Time)(p)
	if len(b) == 0 {
		t.Time = time.Time{}
		return nil
	}
	var seconds int64
	for i := 0; i < len(b); {
		num, wire, next, ok := tag(b, i)
		if !ok {
			return errNotCanonical
		}
		if num != 1 && num != 2 {
			if i, ok = skip(b, next, wire); !ok {
				return errNotCanonical
			}
			continue
		}
		if wire != wireVarint {
			return errNotCanonical
		}
		v, after, ok := varint(b, next)
		if !ok {
			return errNotCanonical
		}
		if num == 1 {
			seconds = int64(v)
		}
		i = after
	}
	t.Time = time.Unix(seconds, 0).Local()
	return nil
}
