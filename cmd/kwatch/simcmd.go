package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// simOptions are the flags of "kwatch sim".
type simOptions struct {
	simCluster
	dir string // where the kubeconfig (and the CA) are written
}

// newSimCommand is "kwatch sim".
func newSimCommand(e *env) *cobra.Command {
	o := &simOptions{}
	cmd := &cobra.Command{
		Use:   "sim [flags]",
		Short: "Serve a simulated cluster for other clients, kubectl included",
		Long:  simLong,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("kwatch sim takes no arguments, got %q", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return runSim(cmd.Context(), e, o)
		},
	}
	addSimFlags(cmd.Flags(), o)
	return cmd
}

func addSimFlags(fs *pflag.FlagSet, o *simOptions) {
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.BoolVar(&o.tls, "tls", false, "serve TLS (HTTP/2) with a self-signed certificate")
	fs.StringVar(&o.token, "token", "", "require this bearer token")
	fs.IntVar(&o.pods, "pods", 1000, "pods to create at start")
	fs.IntVar(&o.namespaces, "namespaces", 10, "namespaces the pods spread over (ns-000, ns-001, ...)")
	fs.Float64Var(&o.rate, "rate", 5, "pod changes per second (creates, updates, deletes); 0 for none")
	fs.DurationVar(&o.bookmarkInterval, "bookmark-interval", time.Minute, "period of BOOKMARK events on watches")
	fs.IntVar(&o.historySize, "history", 0, "watch history kept, in events (0: the simulator's default)")
	fs.StringVar(&o.dir, "dir", "", "directory for the kubeconfig and CA files (default: a new temporary one)")
}

func (o *simOptions) validate() error {
	if o.pods < 0 || o.namespaces < 1 || o.rate < 0 || o.historySize < 0 || o.bookmarkInterval <= 0 {
		return usagef("--pods and --history must be >= 0, --namespaces >= 1, --rate >= 0, --bookmark-interval > 0")
	}
	return nil
}

const simLong = `Serve a simulated Kubernetes API server with churning pods, for kwatch,
kubectl or any other client, until interrupted.

Usage:
  kwatch sim [flags]

Examples:
  kwatch sim --addr 127.0.0.1:8080
  kwatch sim --tls --token secret --pods 5000 --rate 50
`

// runSim is "kwatch sim": it serves until ctx ends.
func runSim(ctx context.Context, e *env, o *simOptions) error {
	g := newGroup(ctx)
	r, err := o.start(ctx, g)
	if err == nil {
		var cleanup func()
		cleanup, err = announceSim(e, o, r)
		defer cleanup()
	}
	if err == nil {
		<-g.ctx.Done()
	}
	if stopErr := g.Stop(); err == nil {
		err = stopErr
	}
	return err
}

// announceSim writes a kubeconfig (and the CA) for the running cluster and
// tells the user how to reach it. cleanup removes a temporary directory.
func announceSim(e *env, o *simOptions, r *simRunning) (cleanup func(), err error) {
	cleanup, dir := func() {}, o.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "kwatch-sim-")
		if err != nil {
			return cleanup, fmt.Errorf("cannot create a directory for the kubeconfig: %w", err)
		}
		cleanup, dir = func() { os.RemoveAll(d) }, d
	}
	return cleanup, writeSimFiles(e, o, r, dir)
}

func writeSimFiles(e *env, o *simOptions, r *simRunning, dir string) error {
	ca := r.srv.CACertPEM()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, simKubeconfig(r.url, ca, o.token), 0o600); err != nil {
		return fmt.Errorf("cannot write the kubeconfig: %w", err)
	}
	fmt.Fprintf(e.stdout, "kwatch sim: serving a simulated cluster at %s (%d pods in %d namespaces, %g changes/s)\n",
		r.url, o.pods, o.namespaces, o.rate)
	if len(ca) > 0 {
		caFile := filepath.Join(dir, "ca.crt")
		if err := os.WriteFile(caFile, ca, 0o644); err != nil {
			return fmt.Errorf("cannot write the CA certificate: %w", err)
		}
		fmt.Fprintf(e.stdout, "CA certificate: %s\n", caFile)
	}
	fmt.Fprintf(e.stdout, "kubeconfig:     %s\n", kc)
	fmt.Fprintf(e.stdout, "try:            kwatch pods -A --kubeconfig %s\n", kc)
	fmt.Fprintf(e.stdout, "                kubectl --kubeconfig %s get pods -A\n", kc)
	return nil
}

// simKubeconfig renders a kubeconfig with one context, "kwatch-sim".
func simKubeconfig(url string, ca []byte, token string) []byte {
	cluster := "    server: " + url + "\n"
	if len(ca) > 0 {
		cluster += "    certificate-authority-data: " + base64.StdEncoding.EncodeToString(ca) + "\n"
	}
	user := " {}\n"
	if token != "" {
		user = "\n    token: " + token + "\n"
	}
	return []byte("apiVersion: v1\nkind: Config\nclusters:\n- name: kwatch-sim\n  cluster:\n" + cluster +
		"contexts:\n- name: kwatch-sim\n  context:\n    cluster: kwatch-sim\n    user: kwatch-sim\n    namespace: default\n" +
		"current-context: kwatch-sim\nusers:\n- name: kwatch-sim\n  user:" + user)
}
