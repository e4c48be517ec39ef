package pbwire

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nested is a message of depth levels: each holds the next as field 1,
// the innermost holds a string as field 2.
func nested(depth int) []byte {
	msg := AppendBytes(nil, 2, []byte("leaf"))
	for range depth - 1 {
		msg = AppendBytes(nil, 1, msg)
	}
	return msg
}

func TestCheckDepth(t *testing.T) {
	tests := []struct {
		name    string
		msg     []byte
		limit   int
		wantErr bool
	}{
		{"empty", nil, 1, false},
		{"flat", AppendBytes(AppendVarint(nil, 1<<3|Varint), 2, nil), 1, false},
		{"at the limit", nested(100), 100, false},
		{"one level over", nested(101), 100, true},
		{"a string shaped like deep messages still counts", AppendBytes(nil, 3, nested(200)), 100, true},
		// A generated decoder descends into the first field before it
		// finds the garbage after it: so must the check.
		{"deep, then malformed", append(nested(101), 0xff), 100, true},
		{"deep after a malformed field is never reached", append([]byte{0x0a, 0x7f}, nested(101)...), 100, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckDepth(tt.msg, tt.limit)
			if !tt.wantErr {
				assert.NoError(t, err)
				return
			}
			var de *DepthError
			require.True(t, errors.As(err, &de), "got %v, want a *DepthError", err)
			assert.Equal(t, tt.limit, de.Limit)
			assert.Contains(t, err.Error(), "100-level limit")
		})
	}
}

// TestCheckDepthOffset: the error says where the message one level too
// deep starts.
func TestCheckDepthOffset(t *testing.T) {
	msg := nested(5)
	err := CheckDepth(msg, 3)
	var de *DepthError
	require.ErrorAs(t, err, &de)
	// Levels 1-3 each start with a two-byte header; level 4 begins at 6.
	assert.Equal(t, 6, de.Offset, "offset of the first message too deep")
}

// deepest is the reference CheckDepth is held to: the deepest level, b
// being at level, of a content that starts with a field, found by walking
// every length-delimited field of the well-formed prefix of each content,
// without a limit.
func deepest(b []byte, level int) int {
	s := NewScanner(b)
	var f Field
	best := 0
	for first := true; s.Next(&f); first = false {
		if first {
			best = level
		}
		if f.Wire == Bytes {
			best = max(best, deepest(f.Data, level+1))
		}
	}
	return best
}

// FuzzCheckDepth holds CheckDepth to the unbounded reference: it refuses a
// message exactly when the reference finds a level past the limit, and
// never panics.
func FuzzCheckDepth(f *testing.F) {
	f.Add(nested(5), uint8(3))
	f.Add(nested(5), uint8(5))
	f.Add(append(nested(6), 0xff), uint8(4))
	f.Add(AppendBytes(AppendBytes(nil, 1, nested(3)), 2, nested(9)), uint8(6))
	f.Add([]byte{0x0a, 0x02, 0x0a, 0x00, 0x12, 0x7f}, uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, limit uint8) {
		l := int(limit%16) + 1
		err := CheckDepth(b, l)
		want := deepest(b, 1) > l
		if (err != nil) != want {
			t.Fatalf("CheckDepth(%x, %d) = %v; the reference finds depth %d", b, l, err, deepest(b, 1))
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%d-level limit", l)) {
			t.Fatalf("the error %q does not name the limit", err)
		}
	})
}
