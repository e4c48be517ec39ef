package cli

import (
	"testing"

	"github.com/kwatch/kwatch/internal/bench/harness"
)

func TestAdjustPicksCompactRows(t *testing.T) {
	cfg := harness.Full()
	for _, r := range cfg.Rows {
		if r.Name == "kwatch-compact" {
			t.Fatal("the compact rows are in the standard runs")
		}
	}
	if err := adjust(&cfg, "kwatch-compact,client-go-proto,kwatch-compact-read", "", 0, false, true); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Rows) != 3 || cfg.Rows[0].Name != "kwatch-compact" || cfg.Rows[2].Name != "kwatch-compact-read" || !cfg.Rows[0].Proto {
		t.Errorf("rows = %+v", cfg.Rows)
	}
}
