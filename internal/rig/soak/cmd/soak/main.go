// Command soak runs kwatch's chaos soak and prints its summary; it exits
// non-zero when an object was lost, a handler call contradicted an earlier
// one, the heap grew or goroutines leaked, and with -store compact when an
// object did not decode or a restart did not resume from its snapshot.
//
// With -mode ha it runs the HA soak instead (soak.RunHA): three managers
// under leader election and three sharded replicas in Filter and in
// Label mode, at once, under faults; it exits non-zero when a key was
// reconciled by two replicas at once, a write from a replica that had
// lost its Lease or key reached the server, or a key was left
// unreconciled.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/internal/rig/soak"
)

func main() {
	var cfg soak.Config
	flag.DurationVar(&cfg.Duration, "duration", 0, "how long to soak (default 1m)")
	flag.IntVar(&cfg.Pods, "pods", 0, "pod names to churn over (default 400)")
	flag.IntVar(&cfg.Rate, "rate", 0, "writes per second during churn (default 400)")
	flag.Uint64Var(&cfg.Seed, "seed", 0, "random seed (default 1)")
	store := flag.String("store", "typed", "informer store mode: typed or compact (compact also restarts the informers from snapshots)")
	flag.IntVar(&cfg.RestartEvery, "restart-every", 0, "with -store compact, cycles between restarts from the snapshots (default 2)")
	mode := flag.String("mode", "informers", "informers (the informers' soak) or ha (managers under leader election and sharded replicas)")
	setups := flag.String("ha-setups", "leader,shard-filter,shard-label", "with -mode ha, the setups to run at once, comma-separated")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch *mode {
	case "informers":
	case "ha":
		os.Exit(runHA(ctx, cfg, *setups))
	default:
		fmt.Fprintf(os.Stderr, "-mode %q: want informers or ha\n", *mode)
		os.Exit(2)
	}
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
	if _, err := soak.Run(ctx, cfg); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// runHA runs the HA soak with cfg's duration and seed and returns the
// exit code.
func runHA(ctx context.Context, cfg soak.Config, setups string) int {
	hc := soak.HAConfig{Duration: cfg.Duration, Seed: cfg.Seed, Out: os.Stdout}
	for _, s := range strings.Split(setups, ",") {
		setup := soak.HASetup(strings.TrimSpace(s))
		if !slices.Contains(soak.HASetups, setup) {
			fmt.Fprintf(os.Stderr, "-ha-setups: %q is not one of %v\n", s, soak.HASetups)
			return 2
		}
		hc.Setups = append(hc.Setups, setup)
	}
	if _, err := soak.RunHA(ctx, hc); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
