package watch

import (
	"bytes"
	stdjson "encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseRecordReadsVersion1: a snapshot written before version 2 loads
// as the same Raws, its metadata scanned from the objects.
func TestParseRecordReadsVersion1(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for i := range 20 {
		m := randomMeta(r, i)
		pb, err := m.Marshal()
		require.NoError(t, err)
		js, err := stdjson.Marshal(m)
		require.NoError(t, err)
		for _, c := range []struct {
			flag byte
			body []byte
			make func(*Raw, []byte) error
		}{{1, pb, (*Raw).Unmarshal}, {0, js, (*Raw).UnmarshalJSON}} {
			want := new(Raw)
			require.NoError(t, c.make(want, c.body))
			got, err := ParseRecord(append([]byte{recordV1, c.flag}, c.body...))
			require.NoError(t, err)
			require.Equal(t, want, got)
			requireRecordRoundTrip(t, got)
		}
	}
}

// TestParseRecordRefusesBadSpans: a version-2 record whose metadata would
// send a read out of its bytes, or out of where such a Raw keeps them, is
// refused.
func TestParseRecordRefusesBadSpans(t *testing.T) {
	pbRaw, jsRaw := new(Raw), new(Raw)
	pb, err := randomMeta(rand.New(rand.NewPCG(1, 2)), 1).Marshal()
	require.NoError(t, err)
	require.NoError(t, pbRaw.Unmarshal(pb))
	require.NoError(t, jsRaw.UnmarshalJSON([]byte(`{"metadata":{"name":"n","labels":{"a":"1"}}}`)))
	for _, c := range []struct {
		name string
		raw  *Raw
		edit func(*Raw)
		want string
	}{
		{"name past the end", jsRaw, func(r *Raw) { r.name = span{0, uint32(len(r.data)) + 1} }, "name"},
		{"JSON name in the body", jsRaw, func(r *Raw) { r.name = span{r.body, r.body + 1} }, "name"},
		{"reversed span", jsRaw, func(r *Raw) { r.rv = span{2, 1} }, "resourceVersion"},
		{"JSON label without a value", jsRaw, func(r *Raw) { r.lbls.to -= 2 }, "label"},
		{"body past the end", jsRaw, func(r *Raw) { r.body = uint32(len(r.data)) + 1 }, "body offset"},
		{"protobuf body offset", pbRaw, func(r *Raw) { r.body = 1 }, "body offset"},
		{"protobuf metadata past the end", pbRaw, func(r *Raw) { r.lbls.to = uint32(len(r.data)) + 1 }, "metadata"},
		{"protobuf uid outside the metadata", pbRaw, func(r *Raw) { r.uid = span{0, 1} }, "uid"},
	} {
		bad := *c.raw
		c.edit(&bad)
		_, err := ParseRecord(bad.AppendRecord(nil))
		require.ErrorContains(t, err, c.want, c.name)
		good := c.raw.AppendRecord(nil)
		for i := range len(good) {
			_, _ = ParseRecord(bytes.Clone(good[:i])) // never panics
		}
	}
}
