package conformance_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/conformance/harness"
	"github.com/kwatch/kwatch/internal/conformance/suite"
)

// results gathers each target's counts for the summary TestMain prints.
var results suite.Results

// servers holds the outcome of the build TestMain runs before the tests.
var servers struct {
	bin harness.Binaries
	err error
}

// realEnabled reports whether the real server runs: everywhere unless
// KWATCH_CONFORMANCE_REAL=0.
func realEnabled() bool { return os.Getenv("KWATCH_CONFORMANCE_REAL") != "0" }

func TestMain(m *testing.M) {
	flag.Parse()
	stopSignals := killServersOnSignal()
	if realEnabled() {
		servers.bin, servers.err = buildServers()
	}
	code := m.Run()
	printSummary(results.All())
	stopSignals()
	os.Exit(code)
}

// suiteReserve is the share of the test timeout kept for the suite itself
// when the servers must be built first.
const suiteReserve = 6 * time.Minute

// buildServers builds (or finds cached) etcd and kube-apiserver. It runs
// before m.Run, outside the test alarm, but the go command still kills the
// binary a minute after -timeout, so the build gets what the suite leaves.
func buildServers() (harness.Binaries, error) {
	opts := harness.BuildOptions{SourceDir: "build", Log: os.Stderr}
	if bin, ok := harness.CachedBinaries(opts); ok {
		return bin, nil
	}
	budget := 3 * time.Hour
	if f := flag.Lookup("test.timeout"); f != nil {
		if d, ok := f.Value.(flag.Getter).Get().(time.Duration); ok && d > 0 {
			budget = d + time.Minute - suiteReserve
		}
	}
	fmt.Fprintf(os.Stderr, "conformance: building etcd %s and kube-apiserver %s (first time: about 15 min on 2 cores; budget %v)\n",
		harness.EtcdVersion, harness.KubernetesVersion, budget)
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	start := time.Now()
	bin, err := harness.EnsureBinaries(ctx, opts)
	if err != nil {
		return bin, fmt.Errorf("%w (the Go build cache keeps what was compiled: run again, or give go test a -timeout of 60m)", err)
	}
	fmt.Fprintf(os.Stderr, "conformance: servers built in %v\n", time.Since(start).Round(time.Second))
	return bin, nil
}

// killServersOnSignal kills every server process group on SIGINT or
// SIGTERM before the test binary dies. The returned func stops listening
// and waits for the watcher goroutine.
func killServersOnSignal() (stop func()) {
	sigs := make(chan os.Signal, 1) // buffered: signal.Notify does not block
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case sig := <-sigs:
			harness.KillAll()
			fmt.Fprintf(os.Stderr, "conformance: %v: servers killed\n", sig)
			os.Exit(2)
		case <-done:
		}
	})
	return func() {
		signal.Stop(sigs)
		close(done)
		wg.Wait()
	}
}

// printSummary prints one line per target; go test shows it with -v or on
// failure.
func printSummary(rs []suite.Result) {
	fmt.Println("conformance summary:")
	for _, r := range rs {
		fmt.Printf("  %-4s: %d cases run, %d passed, %d failed, %d skipped, %d known differences\n",
			r.Target, r.Run, r.Passed, r.Failed, r.Skipped, r.Known)
		printNames("failed", r.FailedNames)
		printNames("known difference", r.KnownNames)
		printNames("known difference no longer seen", r.FixedNames)
	}
	if !realEnabled() {
		fmt.Println("  real: not run (KWATCH_CONFORMANCE_REAL=0)")
	}
}

func printNames(what string, names []string) {
	for _, n := range names {
		fmt.Printf("        %s: %s\n", what, n)
	}
}
