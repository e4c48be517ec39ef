package harness_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/bench/cli"
	"github.com/kwatch/kwatch/internal/bench/harness"
	"github.com/kwatch/kwatch/internal/bench/report"
)

// TestMain lets this test binary be the engine processes the harness
// starts: they are run with -role=engine or -role=queue.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "-role=") {
		os.Exit(cli.Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// tiny is the harness at toy size: every scenario, every row (only the main
// pair in -short mode), one run.
func tiny(t *testing.T) harness.Config {
	cfg := harness.Quick()
	cfg.Mode, cfg.PodCounts = "test", []int{200}
	cfg.ThroughputEvents, cfg.LatencyEvents, cfg.LatencyRate = 2000, 200, 1000
	cfg.QueueItems, cfg.QueueWorkers = 20000, []int{1, 4}
	cfg.LogDir, cfg.PhaseTimeout = t.TempDir(), 2*time.Minute
	if testing.Short() {
		cfg.Rows = slices.DeleteFunc(cfg.Rows, func(r harness.Row) bool { return !r.Main })
	}
	return cfg
}

func TestTinyRun(t *testing.T) {
	cfg := tiny(t)
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
		want := []string{"sync_wall_s", "heap_kb_per_pod", "relist_total_s", "relist_peak_rss_mb"}
		if !row.SyncOnly {
			want = append(want, "tput_events_per_s", "lat_p99_ms")
		}
		for _, m := range want {
			if v, ok := r.Median[m]; !ok || v <= 0 {
				t.Errorf("%s: %s = %v (present %v), want > 0", row.Name, m, v, ok)
			}
		}
		gcKeys := []string{"sync_gc_share_pct", "sync_gc_busy_pct", "relist_gc_share_pct", "relist_gc_busy_pct"}
		if !row.SyncOnly {
			gcKeys = append(gcKeys, "tput_gc_share_pct", "tput_gc_busy_pct", "lat_gc_share_pct", "lat_gc_busy_pct")
		}
		for _, m := range gcKeys {
			if v, ok := r.Median[m]; !ok || v < 0 || v > 100 {
				t.Errorf("%s: %s = %v (present %v), want a share in [0, 100]", row.Name, m, v, ok)
			}
		}
		for _, m := range []string{"sync_gc_cycles", "relist_gc_cycles"} {
			if v, ok := r.Median[m]; !ok || v < 0 {
				t.Errorf("%s: %s = %v (present %v), want a count", row.Name, m, v, ok)
			}
		}
		if !row.SyncOnly {
			if got := r.Median["tput_handler_calls"]; got < 1 {
				t.Errorf("%s: throughput handler calls = %v", row.Name, got)
			}
		}
	}
	if got, want := len(res.Queue), 2*len(cfg.QueueWorkers); got != want {
		t.Errorf("queue rows = %d, want %d", got, want)
	}
	checkOutputs(t, res)
}

// checkOutputs renders the results and checks the files are well formed.
func checkOutputs(t *testing.T, res *report.Results) {
	t.Helper()
	var md bytes.Buffer
	if err := report.WriteMarkdown(&md, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Headline: kwatch-proto / client-go-proto", "## Headline 2: kwatch / client-go",
		"## Targets", "## 200 pods: medians", "## Workqueue", "GC share, initial sync"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	var svg bytes.Buffer
	if err := report.WriteLatencySVG(&svg, res); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&svg)
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("SVG is not well-formed XML: %v", err)
			}
			break
		}
	}
}

// cancelOn cancels when a progress line contains want.
type cancelOn struct {
	want   string
	cancel context.CancelFunc
}

func (c cancelOn) Write(b []byte) (int, error) {
	if strings.Contains(string(b), c.want) {
		c.cancel()
	}
	return len(b), nil
}

// TestStoppedRunKeepsItsRows: a run interrupted after its first row still
// returns that row with medians, the headline and a note that it stopped.
func TestStoppedRunKeepsItsRows(t *testing.T) {
	cfg := tiny(t)
	cfg.Rows = slices.DeleteFunc(cfg.Rows, func(r harness.Row) bool { return r.Name != "kwatch" && r.Name != "client-go" })
	cfg.QueueItems = 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg.Log = cancelOn{want: "kwatch 200 pods run 0:", cancel: cancel}
	res, err := harness.Run(ctx, cfg)
	if err == nil {
		t.Fatal("Run after cancel: no error")
	}
	if res == nil {
		t.Fatal("no results")
	}
	r := report.Find(res.Rows, "kwatch", 200, 0)
	if r == nil || r.Median["sync_wall_s"] <= 0 {
		t.Fatalf("kwatch row = %+v, want its medians", r)
	}
	if len(res.Headlines) == 0 || len(res.Failures) == 0 || !strings.Contains(res.Failures[len(res.Failures)-1], "stopped early") {
		t.Errorf("headlines %v, failures %v", res.Headlines, res.Failures)
	}
}
