package sim

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseQuantity(t *testing.T) {
	tests := []struct {
		in   string
		want string // exact rational value; "" = a parse error
	}{
		{"0", "0"}, {"1", "1"}, {"100m", "1/10"}, {"1.5", "3/2"}, {"+2", "2"}, {"-0.5", "-1/2"},
		{".5", "1/2"}, {"5.", "5"}, {"1n", "1/1000000000"}, {"3u", "3/1000000"}, {"2k", "2000"},
		{"1M", "1000000"}, {"1G", "1000000000"}, {"1T", "1000000000000"}, {"1P", "1000000000000000"},
		{"1E", "1000000000000000000"}, {"1Ki", "1024"}, {"1.5Mi", "1572864"}, {"1Gi", "1073741824"},
		{"1Ti", "1099511627776"}, {"1Pi", "1125899906842624"}, {"1Ei", "1152921504606846976"},
		{"2e3", "2000"}, {"1E3", "1000"}, {"5e-1", "1/2"}, {"1e+2", "100"},
		{"", ""}, {"m", ""}, {".", ""}, {"1..2", ""}, {"1.2.3", ""}, {"1KB", ""}, {"1ki", ""}, {"1e", ""},
		{"1e+", ""}, {"1e1.5", ""}, {"1 Gi", ""}, {"--1", ""}, {"0x10", ""}, {"1e101", ""}, {"1Mi1", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseQuantity(tc.in)
			if tc.want == "" {
				require.Error(t, err, "got %v", got)
				require.Contains(t, err.Error(), "quantities must match the regular expression")
				return
			}
			require.NoError(t, err)
			want, ok := new(big.Rat).SetString(tc.want)
			require.True(t, ok)
			require.Zero(t, want.Cmp(got), "got %s, want %s", got.RatString(), tc.want)
		})
	}
}

func TestRequirementsQOS(t *testing.T) {
	q := func(s string) *big.Rat {
		v, err := parseQuantity(s)
		require.NoError(t, err)
		return v
	}
	tests := []struct {
		name string
		r    requirements
		want string
	}{
		{"nothing", requirements{}, qosBestEffort},
		{"zero requests", requirements{requests: map[string]*big.Rat{"cpu": q("0"), "memory": q("0")}}, qosBestEffort},
		{"equal", requirements{requests: map[string]*big.Rat{"cpu": q("1"), "memory": q("1Gi")},
			limits: map[string]*big.Rat{"cpu": q("1000m"), "memory": q("1024Mi")}}, qosGuaranteed},
		{"memory request below limit", requirements{requests: map[string]*big.Rat{"cpu": q("1"), "memory": q("1Mi")},
			limits: map[string]*big.Rat{"cpu": q("1"), "memory": q("1Gi")}}, qosBurstable},
		{"cpu only", requirements{requests: map[string]*big.Rat{"cpu": q("1")}, limits: map[string]*big.Rat{"cpu": q("1")}}, qosBurstable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, requirementsQOS(tc.r))
		})
	}
}
