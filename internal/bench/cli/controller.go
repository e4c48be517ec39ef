package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kwatch/kwatch/internal/bench/harness"
	"github.com/kwatch/kwatch/internal/bench/report"
)

// ctlFlags are the command-line overrides of the controller scenario.
type ctlFlags struct {
	rows, pods            string
	runs, rounds, workers int
	name, profileDir, out string
	tune                  bool // add ControllerTuningRows
}

// runController runs the controller scenario and writes
// <out>/<name>.{json,md}.
func runController(ctx context.Context, f ctlFlags) error {
	cfg := harness.Controller()
	cfg.Log, cfg.ProfileDir = os.Stderr, f.profileDir
	if f.tune {
		cfg.Rows = append(cfg.Rows, harness.ControllerTuningRows()...)
	}
	if f.name != "" {
		cfg.Mode = f.name
	}
	if f.rows != "" {
		want := strings.Split(f.rows, ",")
		cfg.Rows = slices.DeleteFunc(cfg.Rows, func(r harness.CtlRow) bool { return !slices.Contains(want, r.Name) })
		if len(cfg.Rows) == 0 {
			return fmt.Errorf("no controller row matches -rows=%s", f.rows)
		}
	}
	if f.pods != "" {
		var tmp harness.Config
		if err := adjust(&tmp, "", f.pods, 0, false, false); err != nil {
			return err
		}
		cfg.PodCounts = tmp.PodCounts
	}
	if f.runs > 0 {
		cfg.Runs = f.runs
	}
	if f.rounds > 0 {
		cfg.Rounds = f.rounds
	}
	if f.workers > 0 {
		cfg.Workers = f.workers
	}
	res, err := harness.RunController(ctx, cfg)
	if res == nil {
		return err
	}
	if werr := writeCtlResults(res, f.out); werr != nil {
		return werr
	}
	return err
}

func writeCtlResults(res *report.Results, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, res.Mode)
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".json", append(b, '\n'), 0o644); err != nil {
		return err
	}
	md, err := os.Create(base + ".md")
	if err != nil {
		return err
	}
	err = report.WriteControllerMarkdown(md, res, harness.ControllerPairs())
	if cerr := md.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		fmt.Fprintf(os.Stderr, "results in %s.{json,md}\n", base)
	}
	return err
}
