package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestGCCPUShares(t *testing.T) {
	start := GCCPU{GCS: 1, TotalS: 10, IdleS: 4}
	end := GCCPU{GCS: 2.5, TotalS: 14, IdleS: 5}
	d := end.Sub(start) // gc 1.5 of 4 s, 1 s idle
	if got := d.Share(); got != 0.375 {
		t.Errorf("Share = %v, want 0.375", got)
	}
	if got := d.BusyShare(); got != 0.5 {
		t.Errorf("BusyShare = %v, want 0.5", got)
	}
	var zero GCCPU
	if zero.Share() != 0 || zero.BusyShare() != 0 {
		t.Errorf("an empty span has shares %v and %v, want 0", zero.Share(), zero.BusyShare())
	}
}

func TestHeadlineTables(t *testing.T) {
	res := &Results{
		Rows: []*Row{
			row("kwatch-proto", 10000, 0, map[string]float64{"tput_events_per_s": 30000, "tput_gc_share_pct": 20}),
			row("client-go-proto", 10000, 0, map[string]float64{"tput_events_per_s": 20000, "tput_gc_share_pct": 40}),
			row("kwatch", 10000, 0, map[string]float64{"tput_events_per_s": 12000}),
			row("client-go", 10000, 0, map[string]float64{"tput_events_per_s": 3000}),
		},
		Headlines: []Headline{
			{Title: "default paths", Kwatch: "kwatch-proto", ClientGo: "client-go-proto"},
			{Title: "JSON", Kwatch: "kwatch", ClientGo: "client-go"},
			{Title: "not run", Kwatch: "kwatch-none", ClientGo: "client-go"},
		},
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	first := strings.Index(s, "## Headline: kwatch-proto / client-go-proto")
	second := strings.Index(s, "## Headline 2: kwatch / client-go")
	targets := strings.Index(s, "## Targets")
	if first < 0 || second < first || targets < second {
		t.Fatalf("want the protobuf headline, then the JSON one, then the targets:\n%s", s)
	}
	for _, want := range []string{
		"| watch throughput | events/s | higher | 30000 | 20000 | 1.50x |",
		"| GC share, watch throughput (gc/total) | % | lower | 20.00 | 40.00 | 0.5x |",
		"| watch throughput | events/s | higher | 12000 | 3000 | 4.00x |",
		"| latency p99 | ms | lower | – | – | – |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("markdown lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "kwatch-none") {
		t.Errorf("a headline whose rows did not run is shown:\n%s", s)
	}
}
