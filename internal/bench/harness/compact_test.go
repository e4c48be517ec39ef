package harness_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/internal/bench/harness"
	"github.com/kwatch/kwatch/internal/bench/report"
)

// TestTinyCompactRun runs the compact-store rows beside client-go-proto at
// toy size: every scenario, the restart from a snapshot, the loopback
// limit's throughput, and their comparisons in the report.
func TestTinyCompactRun(t *testing.T) {
	cfg := tiny(t)
	cfg.QueueItems = 0
	cfg.Rows = harness.CompactRows()
	for _, r := range harness.DefaultRows() {
		if r.Name == "client-go-proto" {
			cfg.Rows = append(cfg.Rows, r)
		}
	}
	res, err := harness.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res.Failures) > 0 {
		t.Fatalf("failures (logs in %s):\n%s", cfg.LogDir, strings.Join(res.Failures, "\n"))
	}
	for _, row := range cfg.Rows {
		r := report.Find(res.Rows, row.Name, 200, 0)
		if r == nil {
			t.Fatalf("no result row for %s", row.Name)
		}
		if row.ThroughputOnly {
			// The loopback limit: the sync and every throughput event, framed.
			for _, m := range []string{"sync_wall_s", "tput_events_per_s"} {
				if v, ok := r.Median[m]; !ok || v <= 0 {
					t.Errorf("%s: %s = %v (present %v), want > 0", row.Name, m, v, ok)
				}
			}
			if got := r.Median["tput_handler_calls"]; got != float64(cfg.ThroughputEvents) {
				t.Errorf("%s: %v throughput frames counted, want %d", row.Name, got, cfg.ThroughputEvents)
			}
			continue
		}
		for _, m := range []string{"sync_wall_s", "heap_kb_per_pod", "tput_events_per_s", "lat_p99_ms", "relist_total_s"} {
			if v, ok := r.Median[m]; !ok || v <= 0 {
				t.Errorf("%s: %s = %v (present %v), want > 0", row.Name, m, v, ok)
			}
		}
		for _, m := range []string{"restart_wall_s", "restart_cpu_s", "restart_heap_kb_per_pod"} {
			if v, ok := r.Median[m]; !ok || v <= 0 {
				t.Errorf("%s: %s = %v (present %v), want > 0", row.Name, m, v, ok)
			}
		}
		// The compact rows' second process started from the snapshot the
		// first wrote and listed nothing; client-go-proto listed.
		log, err := os.ReadFile(filepath.Join(cfg.LogDir, row.Name+"-200-run0-restart.log"))
		if err != nil {
			t.Fatal(err)
		}
		if want := "restored=true relists=0"; strings.HasPrefix(row.Name, "kwatch-compact") && !strings.Contains(string(log), want) {
			t.Errorf("%s: the restart's log lacks %q:\n%s", row.Name, want, log)
		}
		// Every stamped write reached the consumer with its stamp.
		if got := r.Median["lat_delivered"]; got < 0.99 {
			t.Errorf("%s: %.3f of the latency writes delivered with a stamp", row.Name, got)
		}
	}
	var md bytes.Buffer
	if err := report.WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Headline: kwatch-compact / client-go-proto", "## Headline 2: kwatch-compact-read / client-go-proto",
		"restart, start to synced", "kwatch-compact / wire-limit"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}
