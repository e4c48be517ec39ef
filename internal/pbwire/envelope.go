package pbwire

import (
	"errors"
	"fmt"
)

// Envelope is a decoded runtime.Unknown: the type of the object and its
// own message.
type Envelope struct {
	APIVersion, Kind string
	Raw              []byte
}

// Unwrap checks the magic and reads the runtime.Unknown after it. Raw
// aliases b.
func Unwrap(b []byte) (Envelope, error) {
	var env Envelope
	if len(b) < len(Magic) || [4]byte(b[:4]) != Magic {
		return env, errors.New(`protobuf body does not start with the "k8s\x00" magic`)
	}
	s := NewScanner(b[len(Magic):])
	var f Field
	for s.Next(&f) {
		switch {
		case f.Num == 1 && f.Wire == Bytes:
			env.APIVersion, env.Kind = ReadTypeMeta(f.Data)
		case f.Num == 2 && f.Wire == Bytes:
			env.Raw = f.Data
		case f.Num == 3 && f.Wire == Bytes && len(f.Data) > 0:
			return env, fmt.Errorf("protobuf body with content encoding %q not supported", Clip(string(f.Data)))
		}
	}
	return env, s.err
}

// ReadTypeMeta reads runtime.TypeMeta; a malformed one yields empty strings,
// which the callers treat as an unexpected kind.
func ReadTypeMeta(b []byte) (apiVersion, kind string) {
	_ = EachBytesField(b, func(num int, data []byte) {
		switch num {
		case 1:
			apiVersion = string(data)
		case 2:
			kind = string(data)
		}
	})
	return apiVersion, kind
}

// RawExtension returns field 1 (raw) of a runtime.RawExtension, or nil.
func RawExtension(b []byte) (raw []byte) {
	_ = EachBytesField(b, func(num int, data []byte) {
		if num == 1 && raw == nil {
			raw = data
		}
	})
	return raw
}

// Wrap appends to dst the enveloped body of an object of the given type
// whose own message is raw: the magic and a runtime.Unknown.
func Wrap(dst []byte, apiVersion, kind string, raw []byte) []byte {
	tm := AppendBytes(nil, 1, []byte(apiVersion))
	tm = AppendBytes(tm, 2, []byte(kind))
	dst = append(dst, Magic[:]...)
	dst = AppendBytes(dst, 1, tm)
	return AppendBytes(dst, 2, raw)
}

// AppendVarint appends v as a varint.
func AppendVarint(dst []byte, v uint64) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// AppendBytes appends field num as a length-delimited field holding data.
func AppendBytes(dst []byte, num int, data []byte) []byte {
	dst = AppendVarint(dst, uint64(num)<<3|Bytes)
	dst = AppendVarint(dst, uint64(len(data)))
	return append(dst, data...)
}

// Clip shortens s for an error message.
func Clip(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
