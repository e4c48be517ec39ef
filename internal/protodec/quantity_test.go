package protodec

import (
	"reflect"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestQuantityTableIsUnmarshal decodes quantities twice (a miss, then a
// hit) and requires each to equal what Quantity.Unmarshal decodes, the
// values too large for int64 included, which the table never keeps.
func TestQuantityTableIsUnmarshal(t *testing.T) {
	for _, s := range []string{"100m", "128Mi", "1", "0", "1e3", "1.5Gi", "9223372036854775807000", "12345678901234567890Ki", "-3"} {
		q := resource.MustParse(s)
		b, err := q.Marshal()
		require.NoError(t, err)
		for range 2 {
			var want, got resource.Quantity
			require.NoError(t, want.Unmarshal(b))
			require.NoError(t, quantityOwn(unsafe.Pointer(&got), b))
			require.True(t, reflect.DeepEqual(got, want), "%s: %#v, want %#v", s, got, want)
		}
		if holdsPointer(&q) {
			slot := quantityTable[quantitySlot([]byte(s))].Load()
			require.True(t, slot == nil || slot.s != s, "%s holds an *inf.Dec and must not be kept", s)
		}
	}
	for s, ptr := range map[string]bool{"100m": false, "128Mi": false, "9223372036854775807000": true} {
		q := resource.MustParse(s)
		require.Equal(t, ptr, holdsPointer(&q), s)
	}
	var q resource.Quantity
	require.Error(t, quantityOwn(unsafe.Pointer(&q), []byte{0x0a, 0x02, 'x', 'y'}), "a bad quantity is Unmarshal's error")
	extra := []byte{0x0a, 0x01, '1', 0x10, 0x01} // a second, unknown field: not the table's form
	var want, got resource.Quantity
	require.NoError(t, want.Unmarshal(extra))
	require.NoError(t, quantityOwn(unsafe.Pointer(&got), extra))
	require.True(t, reflect.DeepEqual(got, want))
}

// TestQuantityTableConcurrent races decodes of colliding quantities; run
// with -race.
func TestQuantityTableConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				q := resource.NewMilliQuantity(int64(i%1500+g), resource.DecimalSI)
				b, err := q.Marshal()
				if err != nil {
					t.Error(err)
					return
				}
				var got resource.Quantity
				if err := quantityOwn(unsafe.Pointer(&got), b); err != nil || got.Cmp(*q) != 0 {
					t.Errorf("%v: got %v (%v)", q, &got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
