package metricstest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	text := "# HELP a_total A.\n# TYPE a_total counter\na_total{name=\"q\",v=\"x\\\"y\\\\z\\n\"} 3\n" +
		"# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 5.5\nh_count 2\n"
	samples, err := Parse(text)
	require.NoError(t, err)
	require.Len(t, samples, 5)
	require.Equal(t, Sample{Name: "a_total", Labels: []Label{{"name", "q"}, {"v", "x\"y\\z\n"}}, Value: 3,
		Key: `a_total{name="q",v="x\"y\\z\n"}`}, samples[0])
	v, ok := samples[0].Get("v")
	require.True(t, ok)
	require.Equal(t, "x\"y\\z\n", v)
	require.Equal(t, map[string]float64{`a_total{name="q",v="x\"y\\z\n"}`: 3, `h_bucket{le="1"}`: 1,
		`h_bucket{le="+Inf"}`: 2, "h_sum": 5.5, "h_count": 2}, Samples(t, text))
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, text, wantErr string
	}{
		{"sample before TYPE", "a 1\n", "before any TYPE"},
		{"TYPE without HELP", "# HELP a A.\n# TYPE b counter\n", "does not follow its HELP"},
		{"unknown type", "# HELP a A.\n# TYPE a summary\n", "unknown type"},
		{"outside family", "# HELP a A.\n# TYPE a gauge\nb 1\n", "outside family"},
		{"bad name", "# HELP 1a A.\n", "invalid metric name"},
		{"bad label name", "# HELP a A.\n# TYPE a gauge\na{x-y=\"1\"} 1\n", "invalid label name"},
		{"bad escape", "# HELP a A.\n# TYPE a gauge\na{x=\"\\t\"} 1\n", "unknown escape"},
		{"unterminated", "# HELP a A.\n# TYPE a gauge\na{x=\"1} 1\n", "unterminated"},
		{"no value", "# HELP a A.\n# TYPE a gauge\na\n", "no value"},
		{"bad value", "# HELP a A.\n# TYPE a gauge\na one\n", "value"},
		{"buckets not cumulative", "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\n", "not cumulative"},
		{"count differs", "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n", "differs from the +Inf bucket"},
		{"bucket without le", "# HELP h H.\n# TYPE h histogram\nh_bucket 1\n", "without le"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.text)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}
