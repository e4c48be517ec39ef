package watch

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// labelsObject is a JSON object with n distinct labels, and the first
// label repeated at the end (the last value wins).
func labelsObject(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"metadata":{"name":"x","labels":{`)
	for i := range n {
		fmt.Fprintf(&b, `"k%d":"v%d",`, i, i)
	}
	b.WriteString(`"k0":"last"}}}`)
	return []byte(b.String())
}

// TestRawLabelScanIsLinear counts the work of reading labels (key
// comparisons and index lookups, not time): it must grow linearly with
// their number. Each label once compared with every earlier one took
// 3.9 s for 32,000 labels.
func TestRawLabelScanIsLinear(t *testing.T) {
	probes := func(n int) int {
		var m rawMeta
		require.NoError(t, scanJSONMeta(labelsObject(n), &m))
		require.Len(t, m.labels, 2*n, "%d distinct labels", n)
		assert.Equal(t, "last", string(m.labels[1]), "the repeated key keeps its last value")
		return m.probes
	}
	small, large := probes(1000), probes(32000)
	// Linear work is at most a few probes per label; quadratic work is
	// about n/2 per label (16,000 at 32,000 labels).
	assert.LessOrEqual(t, large, 4*32001, "got %d probes for 32,000 labels (%d for 1,000), want at most 4 per label", large, small)
	var r Raw
	require.NoError(t, r.UnmarshalJSON(labelsObject(32000)))
	assert.Equal(t, "last", r.Labels().Get("k0"))
	assert.Equal(t, "v31999", r.Labels().Get("k31999"))
	assert.Len(t, r.GetLabels(), 32000)
}
