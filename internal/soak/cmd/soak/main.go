// Command soak runs kwatch's chaos soak and prints its summary; it exits
// non-zero when an object was lost, a handler call contradicted an earlier
// one, the heap grew or goroutines leaked.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kwatch/kwatch/internal/soak"
)

func main() {
	var cfg soak.Config
	flag.DurationVar(&cfg.Duration, "duration", 0, "how long to soak (default 1m)")
	flag.IntVar(&cfg.Pods, "pods", 0, "pod names to churn over (default 400)")
	flag.IntVar(&cfg.Rate, "rate", 0, "writes per second during churn (default 400)")
	flag.Uint64Var(&cfg.Seed, "seed", 0, "random seed (default 1)")
	flag.Parse()
	cfg.Out = os.Stdout
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := soak.Run(ctx, cfg); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
