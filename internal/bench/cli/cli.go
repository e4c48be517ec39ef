// Command bench runs kwatch and client-go side by side against the
// simulated API server and writes the results as JSON, Markdown and an SVG
// latency chart.
//
//	go run ./cmd/bench -quick     # smoke run, under two minutes
//	go run ./cmd/bench            # full run: 10,000 and 100,000 pods
//
// The same binary is the engine process (-role=engine, driven over stdin
// and stdout by the harness) and the workqueue benchmark (-role=queue).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/kwatch/kwatch/internal/bench/engine"
	"github.com/kwatch/kwatch/internal/bench/harness"
	"github.com/kwatch/kwatch/internal/bench/report"
)

func main() {
	var (
		role = flag.String("role", "harness", "harness, engine or queue")
		// harness
		quick      = flag.Bool("quick", false, "smoke run (under two minutes)")
		out        = flag.String("out", "results", "directory for the result files")
		rows       = flag.String("rows", "", "comma-separated row names to run (default: all)")
		tune       = flag.Bool("tune", false, "add kwatch tuning rows (decoder parallelism, page size)")
		pods       = flag.String("pods", "", "comma-separated pod counts, overriding the mode's")
		runs       = flag.Int("runs", 0, "runs for main rows, overriding the mode's")
		profileDir = flag.String("profile-dir", "", "write CPU profiles of each row's first run here")
		noQueue    = flag.Bool("no-queue", false, "skip the workqueue scenario")
		// engine and queue
		eng      = flag.String("engine", "", "engine to run (engine and queue roles)")
		host     = flag.String("host", "", "API server URL (engine role)")
		listMode = flag.String("list-mode", "", "kwatch list mode: auto or paged")
		pageSize = flag.Int64("page-size", 0, "kwatch page size (0: default)")
		par      = flag.Int("parallelism", 0, "kwatch decoder parallelism (0: default)")
		workers  = flag.Int("workers", 1, "workqueue workers (queue role)")
		items    = flag.Int("items", 100000, "workqueue items (queue role)")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch *role {
	case "engine":
		err = engine.Serve(ctx, engine.Config{Engine: *eng, Host: *host, ListMode: *listMode,
			PageSize: *pageSize, Parallelism: *par}, os.Stdin, os.Stdout)
	case "queue":
		err = runQueue(*eng, *workers, *items)
	case "harness":
		cfg := harness.Full()
		if *quick {
			cfg = harness.Quick()
		}
		cfg.ProfileDir, cfg.Log = *profileDir, os.Stderr
		if err = adjust(&cfg, *rows, *pods, *runs, *tune, *noQueue); err == nil {
			err = runHarness(ctx, cfg, *out)
		}
	default:
		err = fmt.Errorf("unknown role %q", *role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func runQueue(eng string, workers, items int) error {
	res, err := engine.RunQueue(eng, workers, items)
	if err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// adjust applies the command-line overrides to cfg.
func adjust(cfg *harness.Config, rows, pods string, runs int, tune, noQueue bool) error {
	if tune {
		cfg.Rows = append(cfg.Rows, harness.TuningRows()...)
		cfg.Pairs = append(cfg.Pairs, harness.TuningPairs()...)
	}
	if rows != "" {
		want := strings.Split(rows, ",")
		cfg.Rows = slices.DeleteFunc(cfg.Rows, func(r harness.Row) bool { return !slices.Contains(want, r.Name) })
		if len(cfg.Rows) == 0 {
			return fmt.Errorf("no row matches -rows=%s", rows)
		}
	}
	if pods != "" {
		cfg.PodCounts = nil
		for _, s := range strings.Split(pods, ",") {
			var n int
			if _, err := fmt.Sscan(s, &n); err != nil || n <= 0 {
				return fmt.Errorf("bad pod count %q", s)
			}
			cfg.PodCounts = append(cfg.PodCounts, n)
		}
	}
	if runs > 0 {
		cfg.Runs = runs
	}
	if noQueue {
		cfg.QueueItems = 0
	}
	return nil
}

func runHarness(ctx context.Context, cfg harness.Config, out string) error {
	res, err := harness.Run(ctx, cfg)
	if res == nil {
		return err
	}
	if werr := writeResults(res, out); werr != nil {
		return werr
	}
	return err
}

func writeResults(res *report.Results, dir string) error {
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
	for _, w := range []struct {
		path  string
		write func(*os.File) error
	}{
		{base + ".md", func(f *os.File) error { return report.WriteMarkdown(f, res) }},
		{base + "-latency.svg", func(f *os.File) error { return report.WriteLatencySVG(f, res) }},
	} {
		f, err := os.Create(w.path)
		if err != nil {
			return err
		}
		err = w.write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "results in %s.{json,md} and %s-latency.svg\n", base, base)
	return nil
}
