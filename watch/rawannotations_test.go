package watch

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/internal/pbwire"
)

// TestProtobufAnnotationsAreTheDecodedOnes: a protobuf Raw's annotations,
// read in place, are what decoding its metadata gives, whatever else the
// metadata holds (managedFields, owner references, many annotations).
func TestProtobufAnnotationsAreTheDecodedOnes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		want := randomMeta(r, i)
		if r.IntN(2) == 0 {
			want.Annotations = map[string]string{}
			for j := range r.IntN(40) {
				want.Annotations[string(rune('a'+j%26))+"/"+want.Name] = string(make([]byte, r.IntN(300)))
			}
			want.Annotations["empty"] = ""
		}
		if r.IntN(2) == 0 {
			want.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "m", Operation: metav1.ManagedFieldsOperationApply,
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{}}`)}}}
		}
		pb, err := want.Marshal()
		require.NoError(t, err)
		var raw Raw
		require.NoError(t, raw.Unmarshal(pb))
		meta, err := raw.Meta()
		require.NoError(t, err)
		assert.Equal(t, meta.Annotations, raw.GetAnnotations(), "object %d", i)
	}
}

// TestProtobufAnnotationsRepeatedKeyAndDamage: a key given twice keeps its
// last value, as the generated decoder does; an entry not in the canonical
// form is read as the generated decoder reads it; and an annotation entry
// that does not decode gives no annotations rather than some of them.
func TestProtobufAnnotationsRepeatedKeyAndDamage(t *testing.T) {
	entry := func(k, v string) []byte {
		e := pbwire.AppendBytes(pbwire.AppendBytes(nil, 1, []byte(k)), 2, []byte(v))
		return pbwire.AppendBytes(nil, pbAnnotations, e)
	}
	object := func(meta []byte) []byte {
		meta = append(pbwire.AppendBytes(nil, pbName, []byte("x")), meta...)
		return pbwire.AppendBytes(nil, pbMetadata, meta)
	}
	var raw Raw
	require.NoError(t, raw.Unmarshal(object(append(entry("a", "1"), entry("a", "2")...))))
	assert.Equal(t, map[string]string{"a": "2"}, raw.GetAnnotations())
	meta, err := raw.Meta()
	require.NoError(t, err)
	assert.Equal(t, meta.Annotations, raw.GetAnnotations())

	// An entry with a field the canonical form lacks (3, which the
	// generated decoder skips) is read by decoding the metadata.
	odd := pbwire.AppendBytes(nil, 3, []byte("x"))
	odd = pbwire.AppendBytes(pbwire.AppendBytes(odd, 1, []byte("k")), 2, []byte("v"))
	require.NoError(t, raw.Unmarshal(object(pbwire.AppendBytes(nil, pbAnnotations, odd))))
	assert.Equal(t, map[string]string{"k": "v"}, raw.GetAnnotations())

	broken := pbwire.AppendBytes(nil, pbAnnotations, []byte{0x0a, 0x05, 'a'}) // key of 5 bytes, 1 there
	require.NoError(t, raw.Unmarshal(object(append(entry("a", "1"), broken...))))
	assert.Nil(t, raw.GetAnnotations())
}

// BenchmarkRawAnnotations compares reading a protobuf object's annotations
// in place with decoding its metadata for them.
func BenchmarkRawAnnotations(b *testing.B) {
	m := randomMeta(rand.New(rand.NewPCG(7, 8)), 1)
	m.Annotations = map[string]string{"a": "1", "kwatch.dev/stamp": "1733000000000000000"}
	for i := range 8 {
		m.ManagedFields = append(m.ManagedFields, metav1.ManagedFieldsEntry{Manager: "manager-" + string(rune('a'+i)),
			Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: make([]byte, 200)}})
	}
	pb, err := m.Marshal()
	require.NoError(b, err)
	var raw Raw
	require.NoError(b, raw.Unmarshal(pb))
	b.Run("in-place", func(b *testing.B) {
		for b.Loop() {
			_ = raw.GetAnnotations()
		}
	})
	b.Run("decoded-metadata", func(b *testing.B) {
		for b.Loop() {
			meta, _ := raw.Meta()
			_ = meta.Annotations
		}
	})
}

// TestProtobufEntryEmptiedByALaterField: a map entry whose key or value is
// given twice, the last time empty, has the empty one, as the generated
// decoder reads it: the labels and annotations read in place must not keep
// the earlier, non-empty one.
func TestProtobufEntryEmptiedByALaterField(t *testing.T) {
	keyEmptied := pbwire.AppendBytes(pbwire.AppendBytes(pbwire.AppendBytes(nil, 1, []byte("a")), 1, nil), 2, []byte("v"))
	valueEmptied := pbwire.AppendBytes(pbwire.AppendBytes(pbwire.AppendBytes(nil, 1, []byte("b")), 2, []byte("x")), 2, nil)
	meta := pbwire.AppendBytes(nil, pbName, []byte("x"))
	for _, num := range []int{pbLabels, pbAnnotations} {
		meta = pbwire.AppendBytes(pbwire.AppendBytes(meta, num, keyEmptied), num, valueEmptied)
	}
	var raw Raw
	require.NoError(t, raw.Unmarshal(pbwire.AppendBytes(nil, pbMetadata, meta)))
	decoded, err := raw.Meta()
	require.NoError(t, err)
	want := map[string]string{"": "v", "b": ""}
	require.Equal(t, want, decoded.Labels)
	require.Equal(t, want, decoded.Annotations)
	assert.Equal(t, want, raw.GetLabels())
	assert.Equal(t, want, raw.GetAnnotations())
	assert.False(t, raw.Labels().Has("a"))
	assert.Equal(t, "", raw.Labels().Get("b"))
	assert.True(t, raw.Labels().Has(""))
}
