package protodec

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/modern-go/reflect2"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// messageMaps has the two kinds of map whose values are messages: a
// resource list's quantities and any other message (apimachinery's own
// types have neither, so its plan is built here from the tags alone).
type messageMaps struct {
	Q map[string]resource.Quantity `protobuf:"bytes,1,rep,name=q"`
	T map[string]metav1.Time       `protobuf:"bytes,2,rep,name=t"`
}

func tablePlan(t *testing.T, typ reflect.Type) *Plan {
	t.Helper()
	b := builder{building: map[reflect.Type]*Plan{}}
	fields, why := b.fields(typ)
	require.Empty(t, why)
	return &Plan{typ: typ, typ2: reflect2.Type2(typ), fields: fields}
}

// TestMapEntryWithAValueTwice: the generated code decodes every value
// field of a map entry, each into a fresh value, and keeps the last, so a
// value that does not decode is its error even when another follows; the
// table must not accept such an entry by decoding the last value alone.
func TestMapEntryWithAValueTwice(t *testing.T) {
	p := tablePlan(t, reflect.TypeFor[messageMaps]())
	entry := func(num byte, vals ...[]byte) []byte {
		e := []byte{0x0a, 0x01, 'k'}
		for _, v := range vals {
			e = append(append(e, 0x12, byte(len(v))), v...)
		}
		return append([]byte{num<<3 | 2, byte(len(e))}, e...)
	}
	badQuantity, goodQuantity := []byte{0x0a, 0x01, 'x'}, []byte{0x0a, 0x01, '1'}
	var want resource.Quantity
	require.Error(t, want.Unmarshal(badQuantity))
	badTime, goodTime := []byte{0x08}, []byte{0x08, 0x01} // seconds: truncated, then 1
	var tm metav1.Time
	require.Error(t, tm.Unmarshal(badTime))

	for _, b := range [][]byte{entry(1, badQuantity, goodQuantity), entry(2, badTime, goodTime)} {
		var got messageMaps
		require.Error(t, p.Decode(b, reflectPtr(&got), true), "%x: an entry whose first value does not decode", b)
	}
	var got messageMaps
	require.NoError(t, p.Decode(append(entry(1, goodQuantity), entry(2, goodTime)...), reflectPtr(&got), true))
	require.True(t, got.Q["k"].Equal(resource.MustParse("1")) && got.T["k"].Unix() == 1, "%+v", got)
}

// TestRepeatedKeysMakeNoLargeMap: a map's entries that all repeat one key
// make a map of one entry, as the generated code makes of them, not one
// made at the size of their run. Without the bound, 200,000 such labels
// (1.6 MB) would make a map of about 10 MB.
func TestRepeatedKeysMakeNoLargeMap(t *testing.T) {
	entry := []byte{11<<3 | 2, 6, 0x0a, 0x01, 'k', 0x12, 0x01, 'v'} // ObjectMeta's labels: k=v
	b := make([]byte, 0, 200_000*len(entry))
	for range 200_000 {
		b = append(b, entry...)
	}
	require.True(t, decodeBoth[metav1.ObjectMeta](t, b, true))
	p := For(reflect.TypeFor[metav1.ObjectMeta]())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var got metav1.ObjectMeta
	require.NoError(t, p.Decode(b, reflectPtr(&got), true))
	runtime.ReadMemStats(&after)
	require.Equal(t, map[string]string{"k": "v"}, got.Labels)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated to decode one label given 200,000 times")
}
