package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		if got := Median(tt.in); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestQuantile(t *testing.T) {
	s := make([]int32, 1000)
	for i := range s {
		s[i] = int32(1000 - i) // 1..1000, reversed
	}
	tests := []struct {
		q    float64
		want int32
	}{{0, 1}, {0.5, 500}, {0.99, 990}, {0.999, 999}, {1, 1000}}
	for _, tt := range tests {
		if got := Quantile(s, tt.q); got != tt.want {
			t.Errorf("Quantile(%v) = %d, want %d", tt.q, got, tt.want)
		}
	}
}

func row(name string, pods, workers int, m map[string]float64) *Row {
	r := &Row{Name: name, Pods: pods, Workers: workers}
	r.Add(m)
	r.Finish()
	return r
}

func TestCompareTargets(t *testing.T) {
	res := &Results{
		Rows: []*Row{
			row("kwatch", 100000, 0, map[string]float64{"tput_events_per_s": 20000, "sync_wall_s": 10}),
			row("client-go", 100000, 0, map[string]float64{"tput_events_per_s": 3000, "sync_wall_s": 35}),
		},
		Queue: []*Row{
			row("kwatch", 0, 4, map[string]float64{QueueMetric.Key: 2e6}),
			row("client-go", 0, 4, map[string]float64{QueueMetric.Key: 1.5e6}),
		},
	}
	Compare(res, []Pair{{"kwatch", "client-go"}}, []int{100000})
	want := map[string]bool{"tput_events_per_s": true, "sync_wall_s": false, QueueMetric.Key: false}
	for _, c := range res.Comparisons {
		w, ok := want[c.Metric]
		if !ok {
			continue
		}
		if c.Met == nil {
			t.Errorf("%s: no target", c.Metric)
			continue
		}
		if *c.Met != w {
			t.Errorf("%s: met = %v (ratio %.3g), want %v", c.Metric, *c.Met, c.Ratio, w)
		}
		delete(want, c.Metric)
	}
	if len(want) > 0 {
		t.Errorf("no comparison for %v", want)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| kwatch vs client-go: ≥5x client-go (JSON) | 100000 pods | tput_events_per_s | 20000 | 3000 | 6.67 | yes |") {
		t.Errorf("markdown targets table:\n%s", md.String())
	}
}

func TestFmtNum(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{{0, "0"}, {0.01234, "0.0123"}, {1.234, "1.23"}, {12.345, "12.35"}, {123.45, "123.5"}, {12345.6, "12346"}}
	for _, tt := range tests {
		if got := fmtNum(tt.in); got != tt.want {
			t.Errorf("fmtNum(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
