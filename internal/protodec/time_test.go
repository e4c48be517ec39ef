package protodec

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// requireTimeAsUnmarshal decodes b with timeOwn and with Time.Unmarshal:
// whenever timeOwn accepts b, Unmarshal must too and decode the same
// value. It returns whether timeOwn accepted b.
func requireTimeAsUnmarshal(t *testing.T, b []byte) bool {
	t.Helper()
	var want, got metav1.Time
	wantErr := want.Unmarshal(b)
	if timeOwn(unsafe.Pointer(&got), b) != nil {
		return false
	}
	require.NoError(t, wantErr, "timeOwn accepted what Time.Unmarshal refuses: %x", b)
	require.True(t, reflect.DeepEqual(got, want), "%x: timeOwn %#v, Unmarshal %#v", b, got, want)
	return true
}

// TestTimeIsUnmarshal: the table's metav1.Time decodes every Timestamp the
// server writes as Time.Unmarshal does, and leaves to it what it does not
// read that way.
func TestTimeIsUnmarshal(t *testing.T) {
	for _, when := range []time.Time{time.Unix(1690000000, 0), time.Unix(1690000000, 123456789), time.Unix(-62135596800, 0), time.Unix(0, 1)} {
		mt := metav1.NewTime(when)
		b, err := mt.Marshal()
		require.NoError(t, err)
		require.True(t, requireTimeAsUnmarshal(t, b), "%v", when)
	}
	for name, b := range map[string][]byte{
		"empty":          {},
		"nanos too":      {0x08, 0x80, 0x80, 0x80, 0x80, 0x06, 0x10, 0x05},
		"seconds twice":  {0x08, 0x01, 0x08, 0x02},
		"unknown field":  {0x08, 0x01, 0x1a, 0x01, 'x'},
		"negative":       {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"only nanos":     {0x10, 0x7f},
		"huge nanos":     {0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"unknown varint": {0x18, 0x05, 0x08, 0x03},
	} {
		require.True(t, requireTimeAsUnmarshal(t, b), name)
	}
	for name, b := range map[string][]byte{
		"seconds as bytes": {0x0a, 0x01, 0x01},
		"truncated":        {0x08, 0x80},
		"past 64 bits":     {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
		"a group":          {0x1b, 0x1c},
		"field zero":       {0x00, 0x01},
	} {
		require.False(t, requireTimeAsUnmarshal(t, b), "%s must be left to Time.Unmarshal", name)
	}
	// Random messages of the pieces a Timestamp is made of.
	pieces := [][]byte{{0x08}, {0x10}, {0x18}, {0x0a}, {0x01}, {0x7f}, {0x80}, {0xff}, {0x00}, {0x02, 'a', 'b'}, {0x1b}, {0x1c}}
	r := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for range 20000 {
		var b []byte
		for range r.IntN(8) {
			b = append(b, pieces[r.IntN(len(pieces))]...)
		}
		if requireTimeAsUnmarshal(t, b) {
			accepted++
		}
	}
	require.Greater(t, accepted, 1000, "the random messages must exercise accepted ones too")
}
