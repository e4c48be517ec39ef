package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"sync/atomic"
	"time"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/kube"
)

// simLoadWait bounds how long the command waits for the simulated cluster's
// initial pods to be created.
const simLoadWait = 2 * time.Minute

// simCluster describes a simulated cluster to start.
type simCluster struct {
	addr             string // listen address; "127.0.0.1:0" picks a port
	tls              bool
	token            string
	pods, namespaces int
	rate             float64 // churn events per second
	bookmarkInterval time.Duration
	historySize      int
}

// simRunning is a started simulated cluster.
type simRunning struct {
	srv *sim.Server
	url string
}

// start serves the simulated cluster and its churn under g, and returns
// once the initial pods exist, so a client's first list sees them all.
// Pods made by the initial load get creation times spread over the past
// three days, so ages look like a real cluster's.
func (c simCluster) start(ctx context.Context, g *group) (*simRunning, error) {
	var loading atomic.Bool
	loading.Store(true)
	srv, err := sim.New(sim.Options{
		TLS: c.tls, TLSHosts: certHosts(c.addr), BearerToken: c.token, BookmarkInterval: c.bookmarkInterval, HistorySize: c.historySize,
		Clock: func() time.Time {
			if loading.Load() {
				return time.Now().Add(-rand.N(72 * time.Hour)).Truncate(time.Second)
			}
			return time.Now()
		},
	})
	if err != nil {
		return nil, fmt.Errorf("simulated cluster: %w", err)
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return nil, fmt.Errorf("cannot serve the simulated cluster: %w", err)
	}
	g.Go(func(ctx context.Context) error { return srv.Serve(ctx, ln) })
	if err := c.load(ctx, g, srv); err != nil {
		return nil, err
	}
	loading.Store(false)
	scheme := "http://"
	if c.tls {
		scheme = "https://"
	}
	return &simRunning{srv: srv, url: scheme + ln.Addr().String()}, nil
}

// certHosts names the listen host in the TLS certificate when it is a
// specific one (the certificate always covers loopback).
func certHosts(addr string) []string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && (ip.IsUnspecified() || ip.IsLoopback()) {
		return nil
	}
	return []string{host}
}

// load creates the initial pods and starts the churn. The churn loads its
// pods itself (it changes only pods it made); without churn (rate 0, which
// to the churn would mean "as fast as possible") the pods are loaded here.
func (c simCluster) load(ctx context.Context, g *group, srv *sim.Server) error {
	if c.rate == 0 {
		if _, err := srv.LoadPods(c.pods, c.namespaces, 1); err != nil {
			return fmt.Errorf("simulated cluster: loading pods: %w", err)
		}
		return nil
	}
	churn, err := sim.NewChurn(srv, sim.ChurnOptions{Pods: c.pods, Namespaces: c.namespaces, Rate: c.rate})
	if err != nil {
		return fmt.Errorf("simulated cluster: %w", err)
	}
	g.Go(churn.Run)
	return waitForLoad(ctx, srv, churn, c.pods)
}

// waitForLoad waits until the churn has loaded its n pods: the server holds
// them, or churning (which starts after the load) has begun.
func waitForLoad(ctx context.Context, srv *sim.Server, churn *sim.Churn, n int) error {
	ctx, cancel := context.WithTimeout(ctx, simLoadWait)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for churn.Events() == 0 && srv.Stats().Objects["pods"] < n {
		select {
		case <-ctx.Done():
			return fmt.Errorf("simulated cluster: loading %d pods: %w", n, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// startSim starts the in-process cluster of --sim on a loopback port and
// returns the Config to reach it.
func startSim(ctx context.Context, g *group, o *getOptions) (*kube.Config, error) {
	c := simCluster{addr: "127.0.0.1:0", pods: o.simPods, namespaces: o.simNamespaces, rate: o.simRate}
	r, err := c.start(ctx, g)
	if err != nil {
		return nil, err
	}
	return &kube.Config{Host: r.url, Namespace: o.namespace}, nil
}
