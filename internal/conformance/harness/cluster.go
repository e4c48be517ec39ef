package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Users of the static token file.
const (
	AdminUser = "kwatch-admin" // in group system:masters: may do anything
	PlainUser = "nobody"       // authenticated, granted nothing by RBAC
)

// Cluster is etcd plus two kube-apiservers on it: Cached (the default,
// with the watch cache) and NoCache (--watch-cache=false), whose watches read
// etcd directly and so see compaction. Start one with StartCluster and Stop
// it on every exit path. Fields are read-only after start.
type Cluster struct {
	Dir        string
	PKI        *PKI
	AdminToken string
	PlainToken string
	Etcd       *Etcd
	Cached     *APIServer
	NoCache    *APIServer
}

// ClusterOptions says where the binaries are and where the cluster's files go.
type ClusterOptions struct {
	Binaries Binaries
	Dir      string // an empty directory that outlives the cluster (t.TempDir)
}

// startAttempts covers the race between picking a free port and binding it.
const startAttempts = 3

// StartCluster starts etcd and both API servers and waits until all are
// ready. On error nothing is left running.
func StartCluster(ctx context.Context, opts ClusterOptions) (*Cluster, error) {
	c := &Cluster{Dir: opts.Dir}
	groups.addDir(opts.Dir)
	var err error
	if c.PKI, err = NewPKI(opts.Dir); err != nil {
		c.Stop()
		return nil, err
	}
	tokenFile, err := c.writeTokens()
	if err != nil {
		c.Stop()
		return nil, err
	}
	if c.Etcd, err = retry(func() (*Etcd, error) { return StartEtcd(ctx, opts.Binaries.Etcd, opts.Dir) }); err != nil {
		c.Stop()
		return nil, err
	}
	spec := APIServerSpec{Bin: opts.Binaries.APIServer, Dir: opts.Dir, EtcdURL: c.Etcd.ClientURL,
		PKI: c.PKI, TokenFile: tokenFile, AdminToken: c.AdminToken}
	if err := c.startAPIServers(ctx, spec); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// startAPIServers starts both servers side by side: each takes tens of
// seconds to become ready, mostly waiting on its own bootstrap.
func (c *Cluster) startAPIServers(ctx context.Context, spec APIServerSpec) error {
	cached, nocache := spec, spec
	cached.Name, cached.WatchCache = "cached", true
	nocache.Name, nocache.WatchCache = "nocache", false
	var wg sync.WaitGroup
	var errCached, errNoCache error
	wg.Go(func() {
		c.Cached, errCached = retry(func() (*APIServer, error) { return StartAPIServer(ctx, cached) })
	})
	wg.Go(func() {
		c.NoCache, errNoCache = retry(func() (*APIServer, error) { return StartAPIServer(ctx, nocache) })
	})
	wg.Wait()
	return errors.Join(errCached, errNoCache)
}

func retry[T any](start func() (T, error)) (T, error) {
	var v T
	var err error
	for range startAttempts {
		if v, err = start(); err == nil || !errors.Is(err, ErrExited) {
			return v, err
		}
	}
	return v, err
}

// writeTokens writes the static token file: one admin, one unprivileged user.
func (c *Cluster) writeTokens() (string, error) {
	c.AdminToken, c.PlainToken = randomToken(), randomToken()
	body := fmt.Sprintf("%s,%s,1,\"system:masters\"\n%s,%s,2\n", c.AdminToken, AdminUser, c.PlainToken, PlainUser)
	path := filepath.Join(c.Dir, "tokens.csv")
	return path, os.WriteFile(path, []byte(body), 0o600)
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}

// Stop stops every server that was started, API servers first, and waits
// for them to exit. It is safe on a partly started cluster.
func (c *Cluster) Stop() {
	var wg sync.WaitGroup
	for _, a := range []*APIServer{c.Cached, c.NoCache} {
		if a != nil {
			wg.Go(a.Stop)
		}
	}
	wg.Wait()
	if c.Etcd != nil {
		c.Etcd.Stop()
	}
	groups.removeDir(c.Dir)
}

// Check returns an error naming any server of the cluster that has exited.
func (c *Cluster) Check() error {
	var errs []error
	for _, p := range []*Process{c.Etcd.Process(), c.Cached.Process(), c.NoCache.Process()} {
		if done, err := p.Exited(); done {
			errs = append(errs, fmt.Errorf("%w: %s (%v); log tail:\n%s", ErrExited, p.Name, err, p.Tail(2000)))
		}
	}
	return errors.Join(errs...)
}
