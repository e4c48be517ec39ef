package controller_test

import (
	"bytes"
	"context"
	"io"
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
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/metrics/metricstest"
)

// lateServer serves srv with watches lagging by a second, and loses the
// first create of a configmap in namespace demo: its client gets no
// useful answer (a 504, or the connection broken), and the server
// commits the create `after` later, as kube-apiserver does when its
// request deadline answered 504 while the storage write was already on
// its way, or when a load balancer reset the client's connection while
// the server went on with the request.
type lateServer struct {
	srv       *sim.Server
	c         *kube.Client
	lost      atomic.Bool // the create was lost
	committed atomic.Bool // and committed since
}

func newLateServer(t *testing.T, srv *sim.Server, answer504 bool, after time.Duration) *lateServer {
	t.Helper()
	ls := &lateServer{srv: srv}
	var lag atomic.Int64
	lag.Store(int64(time.Second))
	h := lagged(srv.Handler(), &lag)
	var mn testutil.MemNet
	ln, err := mn.Listen("api:80")
	require.NoError(t, err)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/api/v1/namespaces/demo/configmaps" && ls.lost.CompareAndSwap(false, true) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				panic(http.ErrAbortHandler)
			}
			late := r.Clone(context.Background())
			late.Body = io.NopCloser(bytes.NewReader(body))
			go func() {
				time.Sleep(after)
				rec := &discard{h: http.Header{}}
				srv.Handler().ServeHTTP(rec, late)
				ls.committed.Store(rec.code == http.StatusCreated)
			}()
			if !answer504 {
				panic(http.ErrAbortHandler) // the connection is reset
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusGatewayTimeout)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
				`"message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}`))
			return
		}
		h.ServeHTTP(w, r)
	})}
	done := make(chan struct{})
	go func() { _ = hs.Serve(ln); close(done) }()
	tr := mn.Transport()
	t.Cleanup(func() { tr.CloseIdleConnections(); _ = hs.Close(); <-done })
	ls.c, err = kube.NewClient(&kube.Config{Host: "http://api:80", HTTP: kube.HTTPConfig{Transport: tr}, RateLimit: kube.RateLimitConfig{QPS: -1}})
	require.NoError(t, err)
	return ls
}

// TestUncertainCreateCommittedLate: the obvious ReplicaSet controller's
// create fails with a 504 or a broken connection, and the server commits
// it later, after the write's client gave up and after any read of the
// server's resourceVersion made just then. The key's retry must not
// create the replica again: it waits until the server can no longer
// apply the write, then until the caches passed the server's version
// read after that (expect_uncertain.go). Before, the key waited only for
// a version read at once, which the caches had passed before the late
// commit; the retry made a second replica, and a delete of the surplus
// followed.
func TestUncertainCreateCommittedLate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		answer504 bool
		after     time.Duration
	}{
		// The server's request deadline answered while the storage
		// write was on its way: it lands a moment later.
		{"504 then the storage commits", true, 2 * time.Second},
		// The client's connection was reset in front of a server that
		// goes on until its request deadline (60 s by default).
		{"reset while the server goes on", false, 55 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				srv, err := sim.New(sim.Options{})
				require.NoError(t, err)
				require.NoError(t, srv.EnsureNamespace("demo"))
				ls := newLateServer(t, srv, tc.answer504, tc.after)
				reg := metrics.NewSet()
				rs := runReplicaSet(t, ls.c, controller.ManagerOptions{Metrics: reg})
				scaleTo(t, srv, 1)
				settle(10 * time.Second)
				require.True(t, ls.lost.Load(), "a create was lost")
				scaleTo(t, srv, 2) // while the key waits
				settle(90 * time.Second)
				require.True(t, ls.committed.Load(), "the lost create was committed late")
				t.Logf("creates %d, deletes %d", rs.creates.Load(), rs.deletes.Load())
				require.Equal(t, 2, children(t, srv), "the key ran once the server could no longer apply the lost create")
				require.EqualValues(t, 1, rs.creates.Load(), "one create besides the lost one")
				require.EqualValues(t, 0, rs.deletes.Load(), "no replica made twice, none to delete")
				timeouts := metricstest.Scrape(t, reg)[`kwatch_expectation_timeouts_total{controller="replicaset"}`]
				require.Zero(t, timeouts, "the caches showed the server's version after the wait, within the bound")
				settle(5 * time.Minute)
				require.Equal(t, 2, children(t, srv))
				require.EqualValues(t, 1, rs.creates.Load())
			})
		})
	}
}
