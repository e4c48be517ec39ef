package leader

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/memcluster"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/kube"
)

// These helpers run one simulated API server and several candidates
// inside a testing/synctest bubble. Each candidate reaches the server
// over its own link (memcluster), so a test can cut one candidate off
// while the others keep talking to the server; time is fake, so the
// election's schedule is asserted exactly.

const (
	testNS   = "demo"
	testName = "leader"
)

// cluster is the simulated server the candidates share.
type cluster struct {
	*memcluster.Cluster
	t   *testing.T
	srv *sim.Server
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	mc := memcluster.New(t)
	return &cluster{Cluster: mc, t: t, srv: mc.Server}
}

// link is one candidate's network path to the server.
type link = memcluster.Link

// candidate is a running Elector whose leading function records the
// fake time each leadership started and stopped.
type candidate struct {
	e      *Elector
	link   *link
	cancel context.CancelFunc
	done   chan error

	mu      sync.Mutex
	started []time.Time
	stopped []time.Time
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testConfig is the usual 15 s / 10 s / 2 s election on the test Lease.
func testConfig(c *kube.Client, id string) Config {
	return Config{Client: c, Namespace: testNS, Name: testName, Identity: id, Logger: quiet()}
}

// runCandidate starts cfg's Elector; the test ends it with stop (or at
// cleanup).
func (c *cluster) runCandidate(id string, adjust func(*Config)) *candidate {
	t := c.t
	t.Helper()
	kc, l := c.Connect(id)
	cfg := testConfig(kc, id)
	if adjust != nil {
		adjust(&cfg)
	}
	e, err := New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cd := &candidate{e: e, link: l, cancel: cancel, done: make(chan error, 1)}
	go func() {
		cd.done <- e.Run(ctx, func(ctx context.Context) {
			cd.mu.Lock()
			cd.started = append(cd.started, time.Now())
			cd.mu.Unlock()
			<-ctx.Done()
			cd.mu.Lock()
			cd.stopped = append(cd.stopped, time.Now())
			cd.mu.Unlock()
		})
	}()
	t.Cleanup(func() { cd.stop() })
	return cd
}

// stop cancels the candidate and returns Run's error (once; later calls
// return nil).
func (cd *candidate) stop() error {
	cd.cancel()
	err, ok := <-cd.done
	if ok {
		close(cd.done)
	}
	return err
}

func (cd *candidate) times() (started, stopped []time.Time) {
	cd.mu.Lock()
	defer cd.mu.Unlock()
	return append([]time.Time(nil), cd.started...), append([]time.Time(nil), cd.stopped...)
}

// lease reads the test Lease from the server, in process.
func (c *cluster) lease() *Lease {
	c.t.Helper()
	obj, err := c.srv.Get("leases.coordination.k8s.io", testNS, testName)
	require.NoError(c.t, err)
	l, err := decodeLease(obj.JSON)
	require.NoError(c.t, err)
	return l
}

// putLease creates the test Lease with spec, in process.
func (c *cluster) putLease(spec LeaseSpec) {
	c.t.Helper()
	l := &Lease{Spec: spec}
	l.APIVersion, l.Kind = "coordination.k8s.io/v1", "Lease"
	l.Namespace, l.Name = testNS, testName
	_, err := c.srv.Create("leases.coordination.k8s.io", mustJSON(c.t, l))
	require.NoError(c.t, err)
}
