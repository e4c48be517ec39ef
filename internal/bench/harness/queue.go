package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"

	"github.com/kwatch/kwatch/internal/bench/report"
	"github.com/kwatch/kwatch/internal/bench/wire"
)

// runQueues runs the workqueue scenario: for each worker count, kwatch's
// queue and client-go's workqueue alternately, each run in a process of
// its own.
func runQueues(ctx context.Context, cfg *Config, res *report.Results) error {
	if cfg.QueueItems <= 0 {
		return nil
	}
	for _, w := range cfg.QueueWorkers {
		for _, name := range []string{"kwatch", "client-go"} {
			res.Queue = append(res.Queue, &report.Row{Name: name, Workers: w})
		}
	}
	for run := range cfg.QueueRuns {
		for _, row := range res.Queue {
			qr, err := runQueue(ctx, cfg, row.Name, row.Workers)
			if err != nil {
				res.Failures = append(res.Failures, err.Error())
				cfg.logf("FAILED %v", err)
				continue
			}
			ops := float64(qr.Items) / (float64(qr.WallNS) / 1e9)
			row.Add(map[string]float64{report.QueueMetric.Key: ops})
			cfg.logf("queue %s workers=%d run %d: %.3g items/s", row.Name, row.Workers, run, ops)
		}
	}
	for _, r := range res.Queue {
		r.Finish()
	}
	return nil
}

func runQueue(ctx context.Context, cfg *Config, engine string, workers int) (wire.QueueResult, error) {
	cmd := exec.CommandContext(ctx, cfg.Exe, "-role=queue", "-engine="+engine,
		"-workers="+strconv.Itoa(workers), "-items="+strconv.Itoa(cfg.QueueItems))
	out, err := cmd.Output()
	if err != nil {
		return wire.QueueResult{}, fmt.Errorf("queue %s workers=%d: %w", engine, workers, err)
	}
	var qr wire.QueueResult
	if err := json.Unmarshal(out, &qr); err != nil {
		return qr, fmt.Errorf("queue %s workers=%d: bad output %q: %w", engine, workers, out, err)
	}
	return qr, nil
}
