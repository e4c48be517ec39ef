package protofront

import (
	"encoding/binary"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The protobuf wire format the real API server speaks, written by hand so
// that serving is copying pre-encoded bytes:
//
//   - An object or list body is the 4-byte magic "k8s\x00" followed by a
//     runtime.Unknown message: 1 typeMeta {1 apiVersion, 2 kind}, 2 raw
//     (the object's own message), 3 contentEncoding, 4 contentType.
//   - A watch stream is a sequence of frames, each a 4-byte big-endian
//     length and a metav1.WatchEvent message (no magic, no envelope):
//     1 type, 2 object {1 raw}, where raw is an enveloped object as above.
//   - A PodList message is 1 metadata (ListMeta: 2 resourceVersion,
//     3 continue) followed by 2 items, one per pod message.

var magic = []byte{'k', '8', 's', 0}

const wireBytes = 2 // protobuf wire type of length-delimited fields

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func varintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// fieldLen is the encoded size of a length-delimited field with n bytes of
// content (for fields numbered below 16, whose tag is one byte).
func fieldLen(n int) int { return 1 + varintLen(uint64(n)) + n }

func appendFieldHeader(b []byte, field, n int) []byte {
	b = append(b, byte(field<<3|wireBytes))
	return appendVarint(b, uint64(n))
}

func appendField(b []byte, field int, data []byte) []byte {
	return append(appendFieldHeader(b, field, len(data)), data...)
}

func appendStringField(b []byte, field int, s string) []byte {
	return append(appendFieldHeader(b, field, len(s)), s...)
}

// typeMetaLen is the size of the envelope's typeMeta message.
func typeMetaLen(kind string) int { return fieldLen(len("v1")) + fieldLen(len(kind)) }

// envelopeLen is the size of an enveloped body whose raw message has n bytes.
func envelopeLen(kind string, n int) int {
	return len(magic) + fieldLen(typeMetaLen(kind)) + fieldLen(n) + fieldLen(0) + fieldLen(0)
}

// appendEnvelopeHeader writes the magic, the typeMeta and the header of the
// raw field; n bytes of raw message must follow, then appendEnvelopeTail.
func appendEnvelopeHeader(b []byte, kind string, n int) []byte {
	b = append(b, magic...)
	b = appendFieldHeader(b, 1, typeMetaLen(kind))
	b = appendStringField(b, 1, "v1")
	b = appendStringField(b, 2, kind)
	return appendFieldHeader(b, 2, n)
}

// appendEnvelopeTail writes the empty contentEncoding and contentType.
func appendEnvelopeTail(b []byte) []byte { return append(b, 3<<3|wireBytes, 0, 4<<3|wireBytes, 0) }

// appendFrame writes one watch frame of type typ carrying obj (a kind
// message, enveloped here).
func appendFrame(b []byte, typ, kind string, obj []byte) []byte {
	env := envelopeLen(kind, len(obj))
	raw := fieldLen(env)                     // RawExtension {1 raw}
	ev := fieldLen(len(typ)) + fieldLen(raw) // WatchEvent {1 type, 2 object}
	b = binary.BigEndian.AppendUint32(b, uint32(ev))
	b = appendStringField(b, 1, typ)
	b = appendFieldHeader(b, 2, raw)
	b = appendFieldHeader(b, 1, env)
	b = appendEnvelopeHeader(b, kind, len(obj))
	b = append(b, obj...)
	return appendEnvelopeTail(b)
}

// listMetaLen is the size of a ListMeta with rv and token.
func listMetaLen(rv uint64, token string) int {
	n := fieldLen(len(strconv.FormatUint(rv, 10)))
	if token != "" {
		n += fieldLen(len(token))
	}
	return n
}

func appendListMeta(b []byte, rv uint64, token string) []byte {
	b = appendFieldHeader(b, 1, listMetaLen(rv, token))
	b = appendStringField(b, 2, strconv.FormatUint(rv, 10))
	if token != "" {
		b = appendStringField(b, 3, token)
	}
	return b
}

// initialEventsEnd is the pod message of the bookmark that ends a
// streaming list at rv.
func initialEventsEnd(rv uint64) ([]byte, error) {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		ResourceVersion: strconv.FormatUint(rv, 10),
		Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
	}}
	return p.Marshal()
}

// expired is the Status message of a 410 for a watch from an old RV.
func expired(from uint64) ([]byte, error) {
	st := metav1.Status{
		Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired,
		Message: "too old resource version: " + strconv.FormatUint(from, 10),
	}
	return st.Marshal()
}
