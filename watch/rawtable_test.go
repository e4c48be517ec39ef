package watch

import (
	"math/rand/v2"
	"net/http"
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/kube"
)

// inBody reports whether s's bytes lie inside the Raw's body.
func inBody(r *Raw, s string) bool { return bodyHolds(r.Body(), s) }

// bodyHolds reports whether s's bytes lie inside b.
func bodyHolds(b []byte, s string) bool {
	if len(s) == 0 || len(b) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(&b[0]))
	return p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(b))
}

// generated decodes b with the generated Unmarshal.
func generated(b []byte) (*metav1.PartialObjectMetadata, error) {
	m := new(metav1.PartialObjectMetadata)
	return m, m.Unmarshal(b)
}

// requireGeneratedDecode requires what RawCodec decoded from raw (obj,
// err) to be what the generated Unmarshal decodes from its body.
func requireGeneratedDecode(t *testing.T, raw *Raw, obj *metav1.PartialObjectMetadata, err error) {
	t.Helper()
	want, wantErr := generated(raw.Body())
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("RawCodec: %v; the generated code: %v", err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(obj, want) {
		t.Fatalf("RawCodec decoded\n%#v\nthe generated code\n%#v", obj, want)
	}
}

func TestRawCodecDecodesFromTheTable(t *testing.T) {
	codec := NewRawCodec[*metav1.PartialObjectMetadata]()
	require.NotNil(t, codec.proto.table, "PartialObjectMetadata decodes from a table")
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 100 {
		pb, err := randomMeta(r, i).Marshal()
		require.NoError(t, err)
		raw := new(Raw)
		require.NoError(t, raw.Unmarshal(pb))
		got, err := codec.Decode(raw)
		requireGeneratedDecode(t, raw, got, err)
		require.True(t, got.Name == "" || inBody(raw, got.Name), "the decoded strings point into the Raw")
	}
}

// TestRawCodecLeavesOddBytesToTheGeneratedCode gives the codec a body the
// table does not read (a group inside an owner reference, which the
// generated code skips) and a body neither reads (an owner reference
// field of the wrong wire type): the codec answers what the generated
// code answers.
func TestRawCodecLeavesOddBytesToTheGeneratedCode(t *testing.T) {
	codec := NewRawCodec[*metav1.PartialObjectMetadata]()
	owner := []byte{0x1a, 0x01, 'x', 0xa3, 0x01, 0xa4, 0x01} // name "x", then group 20 opened and closed
	meta := append([]byte{0x0a, 0x01, 'n', 0x6a, byte(len(owner))}, owner...)
	body := append([]byte{0x0a, byte(len(meta))}, meta...)
	raw := new(Raw)
	require.NoError(t, raw.Unmarshal(body))
	require.Error(t, codec.proto.table.Decode(body, unsafe.Pointer(new(metav1.PartialObjectMetadata)), true), "the table leaves groups")
	got, err := codec.Decode(raw)
	require.NoError(t, err)
	requireGeneratedDecode(t, raw, got, err)
	require.Equal(t, "x", got.OwnerReferences[0].Name)

	bad := []byte{0x1a, 0x01, 'x', 0x18, 0x01} // name "x", then field 3 (name) as a varint
	meta = append([]byte{0x0a, 0x01, 'n', 0x6a, byte(len(bad))}, bad...)
	body = append([]byte{0x0a, byte(len(meta))}, meta...)
	raw = new(Raw)
	require.NoError(t, raw.Unmarshal(body))
	got, err = codec.Decode(raw)
	require.Error(t, err)
	requireGeneratedDecode(t, raw, got, err)
}

// TestDecodeObjectAliasingDecodesFromTheTable: an answer's object decodes
// from the table with its strings in the answer, into what DecodeObject
// (the generated code, interned) decodes; what the table leaves (a group)
// and what nothing decodes go to the generated code as in DecodeObject.
func TestDecodeObjectAliasingDecodesFromTheTable(t *testing.T) {
	c := protoClient(t, func(http.ResponseWriter, *http.Request) {})
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 100 {
		pb, err := randomMeta(r, i).Marshal()
		require.NoError(t, err)
		body := protoBody("Pod", pb)
		got, err := DecodeObjectAliasing[*metav1.PartialObjectMetadata](c, body, kube.ContentTypeProtobuf)
		require.NoError(t, err)
		want, err := DecodeObject[*metav1.PartialObjectMetadata](c, body, kube.ContentTypeProtobuf)
		require.NoError(t, err)
		require.Equal(t, want, got)
		require.True(t, got.Name == "" || bodyHolds(body, got.Name), "the decoded strings point into the answer")
		require.True(t, want.Name == "" || !bodyHolds(body, want.Name), "DecodeObject copies")
	}

	owner := []byte{0x1a, 0x01, 'x', 0xa3, 0x01, 0xa4, 0x01} // name "x", then group 20 opened and closed
	meta := append([]byte{0x0a, 0x01, 'n', 0x6a, byte(len(owner))}, owner...)
	body := protoBody("Pod", append([]byte{0x0a, byte(len(meta))}, meta...))
	got, err := DecodeObjectAliasing[*metav1.PartialObjectMetadata](c, body, kube.ContentTypeProtobuf)
	require.NoError(t, err, "the generated code reads what the table leaves")
	require.Equal(t, "x", got.OwnerReferences[0].Name)

	bad := []byte{0x1a, 0x01, 'x', 0x18, 0x01} // name "x", then field 3 (name) as a varint
	meta = append([]byte{0x0a, 0x01, 'n', 0x6a, byte(len(bad))}, bad...)
	_, err = DecodeObjectAliasing[*metav1.PartialObjectMetadata](c, protoBody("Pod", append([]byte{0x0a, byte(len(meta))}, meta...)), kube.ContentTypeProtobuf)
	var de *DecodeError
	require.ErrorAs(t, err, &de)

	_, err = DecodeObjectAliasing[*metav1.PartialObjectMetadata](c, protoBody("Status", nil), kube.ContentTypeProtobuf)
	require.ErrorContains(t, err, "Status")
}
