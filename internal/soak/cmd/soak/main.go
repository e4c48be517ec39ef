// Command soak runs kwatch's chaos soak and prints its summary; it exits
// non-zero when an object was lost, a handler call contradicted an earlier
// one, the heap grew or goroutines leaked, and with -store compact when an
// object did not decode or a restart did not resume from its snapshot.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/internal/soak"
)

func main() {
	var cfg soak.Config
	flag.DurationVar(&cfg.Duration, "duration", 0, "how long to soak (default 1m)")
	flag.IntVar(&cfg.Pods, "pods", 0, "pod names to churn over (default 400)")
	flag.IntVar(&cfg.Rate, "rate", 0, "writes per second during churn (default 400)")
	flag.Uint64Var(&cfg.Seed, "seed", 0, "random seed (default 1)")
	store := flag.String("store", "typed", "informer store mode: typed or compact (compact also restarts the informers from snapshots)")
	flag.IntVar(&cfg.RestartEvery, "restart-every", 0, "with -store compact, cycles between restarts from the snapshots (default 2)")
	flag.Parse()
	switch *store {
	case "typed":
		cfg.Store = informer.StoreTyped
	case "compact":
		cfg.Store = informer.StoreCompact
	default:
		fmt.Fprintf(os.Stderr, "-store %q: want typed or compact\n", *store)
		os.Exit(2)
	}
	cfg.Out = os.Stdout
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := soak.Run(ctx, cfg); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
