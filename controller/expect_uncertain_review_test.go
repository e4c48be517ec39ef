package controller_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
)

// TestReviewUncertainCreate: the server commits a create but its answer is
// lost (the connection breaks). The reconcile fails and is retried while
// the cache lags: the obvious controller creates the replica again (and
// deletes the surplus once the cache shows both) unless the write of
// unknown outcome is waited for: until the caches passed the server's
// resourceVersion read after it (fails without expect_uncertain.go).
func TestReviewUncertainCreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := sim.New(sim.Options{})
		require.NoError(t, err)
		require.NoError(t, srv.EnsureNamespace("demo"))
		var lag atomic.Int64
		lag.Store(int64(time.Second))
		var lose atomic.Bool
		lose.Store(true)
		h := lagged(srv.Handler(), &lag)
		var mn testutil.MemNet
		ln, err := mn.Listen("api:80")
		require.NoError(t, err)
		hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && lose.Load() && r.URL.Path == "/api/v1/namespaces/demo/configmaps" {
				rec := &discard{h: http.Header{}}
				h.ServeHTTP(rec, r)
				if rec.code == 0 || rec.code == http.StatusCreated {
					lose.Store(false)
					panic(http.ErrAbortHandler) // committed, answer lost
				}
			}
			h.ServeHTTP(w, r)
		})}
		done := make(chan struct{})
		go func() { _ = hs.Serve(ln); close(done) }()
		tr := mn.Transport()
		t.Cleanup(func() { tr.CloseIdleConnections(); _ = hs.Close(); <-done })
		c, err := kube.NewClient(&kube.Config{Host: "http://api:80", HTTP: kube.HTTPConfig{Transport: tr}, RateLimit: kube.RateLimitConfig{QPS: -1}})
		require.NoError(t, err)
		rs := runReplicaSet(t, c, controller.ManagerOptions{})
		scaleTo(t, srv, 1)
		settle(time.Minute)
		require.False(t, lose.Load(), "an answer was lost")
		t.Logf("creates %d, deletes %d", rs.creates.Load(), rs.deletes.Load())
		require.Equal(t, 1, children(t, srv), "one replica")
		require.Zero(t, rs.deletes.Load(), "no excess replica to delete")
	})
}

type discard struct {
	h    http.Header
	code int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(code int)        { d.code = code }
