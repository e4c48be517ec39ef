package harness_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/bench/harness"
	"github.com/kwatch/kwatch/internal/bench/report"
)

// TestControllerTiny runs the controller scenario at toy size, every row,
// and checks behaviour only: every pod reached its final state in each
// engine (the harness checks the server after the last round: every pod
// carries the round, exactly every tenth the reconciler's mark), never
// speed.
func TestControllerTiny(t *testing.T) {
	const pods = 200
	cfg := harness.Controller()
	cfg.Mode, cfg.PodCounts, cfg.Runs, cfg.Rounds = "controller-test", []int{pods}, 1, 1
	cfg.LogDir, cfg.PhaseTimeout = t.TempDir(), 2*time.Minute
	res, err := harness.RunController(context.Background(), cfg)
	if err != nil {
		t.Fatalf("RunController: %v", err)
	}
	if len(res.Failures) > 0 {
		t.Fatalf("failures (logs in %s):\n%s", cfg.LogDir, strings.Join(res.Failures, "\n"))
	}
	for _, row := range cfg.Rows {
		name := row.Name
		r := report.Find(res.Rows, name, pods, 0)
		if r == nil {
			t.Fatalf("no result row for %s", name)
		}
		patched := r.Median["ctl_patched_pods"]
		if patched < 1 || patched > pods/2 {
			t.Errorf("%s: %v pods patched on the server, want about a tenth of %d", name, patched, pods)
		}
		if got := r.Median["ctl_patches"]; got != patched {
			t.Errorf("%s: %v patches sent in the round, want one per patched pod (%v)", name, got, patched)
		}
		if got := r.Median["ctl_reconciles_per_pod"]; got < 1 {
			t.Errorf("%s: %v reconciles per pod, want at least 1", name, got)
		}
		for _, m := range []string{"ctl_pods_per_s", "ctl_cpu_us_per_reconcile", "ctl_heap_kb_per_pod", "ctl_sync_s"} {
			if v, ok := r.Median[m]; !ok || v <= 0 {
				t.Errorf("%s: %s = %v (present %v), want > 0", name, m, v, ok)
			}
		}
	}
	var md bytes.Buffer
	if err := report.WriteControllerMarkdown(&md, res, harness.ControllerPairs()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## 200 pods: medians", "## 200 pods: ratios kwatch/controller-runtime"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}
