package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/kwatch/kwatch/kube"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, a second one kills the process at once.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // the command failed: no cluster, refused, unreachable, ...
	exitUsage = 2 // bad flags or arguments
)

// env is what a command needs from the process: its output streams and
// whether they are terminals. Tests call run with plain buffers.
type env struct {
	stdout, stderr io.Writer
	outTTY, errTTY bool
	getenv         func(string) string
}

// run is the whole program; it returns the exit status. ctx ends on
// SIGINT or SIGTERM, which is a normal end (status 0).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, outTTY: isTerminal(stdout), errTTY: isTerminal(stderr), getenv: os.Getenv}
	err := dispatch(ctx, e, args)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	}
	fmt.Fprintln(stderr, "kwatch: "+oneLine(err.Error()))
	var ue *usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitError
}

func dispatch(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(e.stdout, mainHelp)
		return nil
	}
	switch args[0] {
	case "help":
		return help(ctx, e, args[1:])
	case "-h", "--help", "-help":
		fmt.Fprint(e.stdout, mainHelp)
		return nil
	case "--version", "-version", "version":
		fmt.Fprintln(e.stdout, versionString())
		return nil
	case "sim":
		return runSim(ctx, e, args[1:])
	case "get":
		return runGet(ctx, e, args[1:])
	}
	return runGet(ctx, e, args)
}

// help answers "kwatch help [COMMAND]": the main help, or the command's.
func help(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(e.stdout, mainHelp)
		return nil
	}
	switch args[0] {
	case "get":
		return runGet(ctx, e, []string{"--help"})
	case "sim":
		return runSim(ctx, e, []string{"--help"})
	}
	return usagef("no help for %q: try \"kwatch help get\" or \"kwatch help sim\"", args[0])
}

// oneLine keeps an error message on one line: server messages may hold
// newlines, and a reader wants one line per failure.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func versionString() string {
	v := "kwatch " + kube.Version + " (" + runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += ", commit " + s.Value[:12]
			}
		}
	}
	return v + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")"
}

const mainHelp = `kwatch lists and watches Kubernetes resources, like "kubectl get -w" that never
gives up: it shows the initial state, then every change, and survives
disconnects, expired resourceVersions (410) and API server restarts by itself.

Usage:
  kwatch [get] RESOURCE [NAME] [flags]   list, then watch and print changes
  kwatch sim [flags]                     serve a simulated cluster for other clients
  kwatch version                         print the version

Examples:
  kwatch pods                            pods of the current namespace, then changes
  kwatch pods -A -o wide                 every namespace, with IP and node
  kwatch get deploy -n kube-system       any resource: name, plural, short name or kind
  kwatch pods -l app=web --watch=false   list once and exit
  kwatch pods -o json --output-watch-events | jq .type
  kwatch pods --sim                      against a built-in simulated cluster
  kwatch sim --addr 127.0.0.1:8080       serve the simulated cluster

Run "kwatch get --help" or "kwatch sim --help" for the flags.
`
