package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// simOptions are the flags of "kwatch sim".
type simOptions struct {
	simCluster
	dir string // where the kubeconfig (and the CA) are written
}

func parseSimArgs(args []string, e *env) (*simOptions, error) {
	o := &simOptions{}
	var help bool
	f := newFlagSet("sim")
	f.stringVar(&o.addr, "", "addr", "127.0.0.1:8080", "address to listen on")
	f.boolVar(&o.tls, "", "tls", false, "serve TLS (HTTP/2) with a self-signed certificate")
	f.stringVar(&o.token, "", "token", "", "require this bearer token")
	f.intVar(&o.pods, "pods", 1000, "pods to create at start")
	f.intVar(&o.namespaces, "namespaces", 10, "namespaces the pods spread over (ns-000, ns-001, ...)")
	f.floatVar(&o.rate, "rate", 5, "pod changes per second (creates, updates, deletes); 0 for none")
	f.durationVar(&o.bookmarkInterval, "bookmark-interval", time.Minute, "period of BOOKMARK events on watches")
	f.intVar(&o.historySize, "history", 0, "watch history kept, in events (0: the simulator's default)")
	f.stringVar(&o.dir, "", "dir", "", "directory for the kubeconfig and CA files (default: a new temporary one)")
	f.boolVar(&help, "h", "help", false, "show this help")
	pos, err := f.parse(args)
	switch {
	case err != nil:
		return nil, err
	case help:
		fmt.Fprint(e.stdout, simHelpHead+f.helpText())
		return nil, flag.ErrHelp
	case len(pos) > 0:
		return nil, usagef("kwatch sim takes no arguments, got %q", pos)
	case o.pods < 0 || o.namespaces < 1 || o.rate < 0 || o.historySize < 0 || o.bookmarkInterval <= 0:
		return nil, usagef("--pods and --history must be >= 0, --namespaces >= 1, --rate >= 0, --bookmark-interval > 0")
	}
	return o, nil
}

const simHelpHead = `Serve a simulated Kubernetes API server with churning pods, for kwatch,
kubectl or any other client, until interrupted.

Usage:
  kwatch sim [flags]

Examples:
  kwatch sim --addr 127.0.0.1:8080
  kwatch sim --tls --token secret --pods 5000 --rate 50

Flags:
`

// runSim is "kwatch sim": it serves until ctx ends.
func runSim(ctx context.Context, e *env, args []string) error {
	o, err := parseSimArgs(args, e)
	if err != nil {
		return err
	}
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
