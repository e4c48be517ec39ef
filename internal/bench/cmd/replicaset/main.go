// Command replicaset runs the ReplicaSet scenario (package replicaset) for
// each controller at each watch lag and writes the results:
//
//	go run ./cmd/replicaset -lags 0,200ms,1s -o results/replicaset
//
// writes results/replicaset.md and results/replicaset.json.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/kwatch/kwatch/internal/bench/replicaset"
)

func main() {
	lags := flag.String("lags", "0,200ms,1s", "watch lags, comma-separated")
	only := flag.String("controllers", "", "controllers to run, comma-separated (default: all)")
	out := flag.String("o", "results/replicaset", "output path without extension")
	flag.Parse()
	if err := run(*lags, *only, *out); err != nil {
		fmt.Fprintln(os.Stderr, "replicaset:", err)
		os.Exit(1)
	}
}

func run(lagList, only, out string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var lags []time.Duration
	for _, s := range strings.Split(lagList, ",") {
		if s == "0" {
			lags = append(lags, 0)
			continue
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return fmt.Errorf("-lags: %q is not a duration of 0 or more", s)
		}
		lags = append(lags, d)
	}
	var results []replicaset.Result
	for _, lag := range lags {
		for _, c := range replicaset.Controllers() {
			if only != "" && !strings.Contains(","+only+",", ","+c.Name+",") {
				continue
			}
			fmt.Fprintf(os.Stderr, "%s at lag %v ...\n", c.Name, lag)
			r, err := replicaset.Run(ctx, c, lag, replicaset.Options{})
			if err != nil {
				return err
			}
			results = append(results, r)
		}
	}
	if err := replicaset.WriteMarkdown(os.Stdout, results); err != nil {
		return err
	}
	md, err := os.Create(out + ".md")
	if err != nil {
		return err
	}
	defer md.Close()
	if err := replicaset.WriteMarkdown(md, results); err != nil {
		return err
	}
	js, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out+".json", append(js, '\n'), 0o644)
}
