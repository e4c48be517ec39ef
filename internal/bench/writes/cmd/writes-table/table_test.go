package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/kwatch/kwatch/internal/bench/writes
cpu: Some CPU
BenchmarkWrites/create/ConfigMap/kwatch-json-2         	     300	    200000 ns/op	  100000 cpu-ns/op	      5000 req/s	   14000 B/op	     180 allocs/op
BenchmarkWrites/create/ConfigMap/kwatch-json-2         	     300	    250000 ns/op	  120000 cpu-ns/op	      4000 req/s	   14000 B/op	     180 allocs/op
BenchmarkWrites/create/ConfigMap/kwatch-json-2         	     300	    100000 ns/op	   80000 cpu-ns/op	     10000 req/s	   14000 B/op	     182 allocs/op
BenchmarkWrites/create/ConfigMap/client-go-json-2      	     300	    400000 ns/op	  200000 cpu-ns/op	      2500 req/s	   16000 B/op	     240 allocs/op
BenchmarkWrites/create/ConfigMap/kwatch-proto          	     300	    200000 ns/op	   50000 cpu-ns/op	      5000 req/s	   11000 B/op	     120 allocs/op
BenchmarkWrites/create/ConfigMap/kwatch-proto#01       	     300	    200000 ns/op	   50000 cpu-ns/op	      5000 req/s	   11000 B/op	     120 allocs/op
BenchmarkWrites/delete/Pod/client-go-proto
    writes_bench_test.go:81: delete 0: refused
--- SKIP: BenchmarkWrites/delete/Pod/client-go-proto
--- SKIP: BenchmarkWrites/delete/ConfigMap/client-go-proto
    writes_bench_test.go:81: the reason after
--- SKIP: BenchmarkWrites/delete/ConfigMap/client-go-proto#01
    writes_bench_test.go:81: the reason after
PASS
ok  	github.com/kwatch/kwatch/internal/bench/writes	4.608s
`

func TestParse(t *testing.T) {
	r, err := parse([]byte(sample))
	require.NoError(t, err)
	kj := key{"create", "ConfigMap", "kwatch-json"}
	if got, want := r.runs[kj]["req/s"], []float64{5000, 4000, 10000}; !equal(got, want) {
		t.Errorf("kwatch-json req/s = %v, want %v", got, want)
	}
	if got, _ := r.median(kj, "req/s"); got != 5000 {
		t.Errorf("median req/s = %v, want 5000", got)
	}
	if got := r.ratio(kj, key{"create", "ConfigMap", "client-go-json"}, "req/s"); got != "2.00" {
		t.Errorf("ratio req/s = %s, want 2.00", got)
	}
	if got := r.ratio(key{"create", "ConfigMap", "kwatch-proto"}, key{"create", "ConfigMap", "client-go-proto"}, "req/s"); got != "n/a" {
		t.Errorf("ratio against a missing row = %s, want n/a", got)
	}
	if got := len(r.runs[key{"create", "ConfigMap", "kwatch-proto"}]["ns/op"]); got != 2 {
		t.Errorf("kwatch-proto (no -procs suffix, then #01) has %d runs, want 2", got)
	}
	if got, want := r.maxRuns(), 3; got != want {
		t.Errorf("maxRuns = %d, want %d", got, want)
	}
	if got := len(r.skipped); got != 2 {
		t.Errorf("%d skips recorded, want 2 (a row's rounds count once): %v", got, r.skipped)
	}
	md := render(r, header{command: "make bench-writes", date: time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)})
	for _, want := range []string{
		"| create | ConfigMap | 2.00 | n/a | 0.50 | n/a | 0.75 | n/a | 0.88 | n/a |\n",
		"| create | ConfigMap | 1.00 | 0.50 | 0.67 | 0.79 |\n",
		"| create | ConfigMap | kwatch-json | 5000 | 120% | 100 | 40% | 180 | 14000 |\n",
		"cpu: Some CPU",
		"- BenchmarkWrites/delete/Pod/client-go-proto: writes_bench_test.go:81: delete 0: refused\n",
		"- BenchmarkWrites/delete/ConfigMap/client-go-proto: writes_bench_test.go:81: the reason after\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for name, out := range map[string]string{
		"failure":   sample + "--- FAIL: BenchmarkWrites/get\nFAIL\n",
		"no result": "goos: linux\nPASS\n",
		"odd units": "BenchmarkWrites/get/Pod/kwatch-json-2 300 100 ns/op 5\n",
	} {
		if _, err := parse([]byte(out)); err == nil {
			t.Errorf("%s: parse succeeded, want an error", name)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got, _ := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if _, ok := median(nil); ok {
		t.Errorf("median(nil) ok, want not ok")
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
