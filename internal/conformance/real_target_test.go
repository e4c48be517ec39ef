package conformance_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/internal/conformance/harness"
	"github.com/kwatch/kwatch/internal/conformance/suite"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// realTarget is the suite's view of a harness.Cluster: Config points at the
// API server with the watch cache, StorageConfig at the one without.
type realTarget struct {
	cl      *harness.Cluster
	kube    suite.Kube
	cached  *kube.Client
	nocache *kube.Client
	seq     atomic.Int64
}

func newRealTarget(t *testing.T, cl *harness.Cluster) *realTarget {
	r := &realTarget{cl: cl}
	var err error
	r.cached, err = kube.NewClient(r.Config(suite.Admin))
	require.NoError(t, err)
	r.nocache, err = kube.NewClient(r.StorageConfig())
	require.NoError(t, err)
	r.kube = suite.Kube{C: r.cached}
	return r
}

func (r *realTarget) Name() string { return "real" }

func (r *realTarget) Config(u suite.User) *kube.Config {
	tokens := map[suite.User]string{suite.Admin: r.cl.AdminToken, suite.Plain: r.cl.PlainToken, suite.Stranger: "not-a-known-token"}
	return r.config(r.cl.Cached.URL, tokens[u])
}

func (r *realTarget) StorageConfig() *kube.Config {
	return r.config(r.cl.NoCache.URL, r.cl.AdminToken)
}

func (r *realTarget) config(host, token string) *kube.Config {
	return &kube.Config{Host: host, Auth: kube.AuthConfig{BearerToken: token}, TLS: kube.TLSConfig{CAData: r.cl.PKI.CAPEM}}
}

// expireLimit bounds the wait for compaction: two compaction intervals
// (10 s each) suffice when the machine keeps up; the rest is slack.
const expireLimit = 3 * time.Minute

// Expire waits for the API server's periodic compaction to pass rv. The
// compactor compacts to the revision it saw one interval earlier, so it
// needs a revision above rv to exist: a namespace is created to make one.
// Then it polls an exact list at rv+1 on both servers until both refuse
// it. A watch from rv reads etcd from revision rv+1, which etcd refuses
// only once the compaction is past rv+1; an exact list at rv is refused a
// revision sooner, when a watch from rv may still replay what followed.
func (r *realTarget) Expire(ctx context.Context, rv string) error {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return fmt.Errorf("expire: resourceVersion %q is not a revision: %w", rv, err)
	}
	name := fmt.Sprintf("expire-%d-%d", time.Now().UnixNano()%1e6, r.seq.Add(1))
	if err := r.kube.CreateNamespace(ctx, name); err != nil {
		return fmt.Errorf("expire: write a newer revision: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, expireLimit)
	defer cancel()
	next := strconv.FormatUint(n+1, 10)
	opts := watch.ListOptions{ResourceVersion: next, ResourceVersionMatch: watch.MatchExact, Limit: 1, Form: watch.FormMetadata}
	for _, c := range []*kube.Client{r.nocache, r.cached} {
		for {
			_, err := watch.List[*metav1.PartialObjectMetadata](ctx, c, kube.Pods, kube.Scope{}, opts)
			if kube.IsGone(err) {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("expire: RV %s still served by %s after %v (last answer: %v)", next, c.Host(), expireLimit, err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
	return nil
}
