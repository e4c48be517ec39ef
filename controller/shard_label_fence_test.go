package controller

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/shard"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cmObj is a ConfigMap as far as Label mode needs it.
type cmObj struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
}

// TestLabelModeRelabelIsFenced: the Label-mode relabel is a write of
// the replica's reconcile like any other and goes through the fenced
// client. A replica that left the ring (its term over, the key no
// longer its) and still relabels, as a reconcile that ignored its
// context would, is refused before the patch is sent. Before the fix
// the patch went through the manager's unfenced connection and reached
// the server. Default ring timings.
func TestLabelModeRelabelIsFenced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, err := sim.New(sim.Options{})
		require.NoError(t, err)
		require.NoError(t, srv.EnsureNamespace("demo"))
		_, err = srv.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"cm-0"}}`))
		require.NoError(t, err)
		var patches atomic.Int32
		kc := memClient(t, srv, "a", func(req *http.Request) {
			if req.Method == http.MethodPatch && strings.Contains(req.URL.Path, "/configmaps/") {
				patches.Add(1)
			}
		})
		log := slog.New(slog.NewTextHandler(io.Discard, nil))
		m, err := NewManager(kc, ManagerOptions{Logger: log, Namespace: "demo",
			Sharding: &shard.Config{Namespace: "demo", Ring: "cms", Identity: "a", Mode: shard.Label}})
		require.NoError(t, err)
		var reconciled atomic.Bool
		_, err = New(m, Config[*cmObj]{Name: "cms", For: kube.Typed[*cmObj](kube.ConfigMaps),
			Reconcile: func(context.Context, Key) (Result, error) { reconciled.Store(true); return Result{}, nil }})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- m.Run(ctx) }()
		for !reconciled.Load() {
			time.Sleep(100 * time.Millisecond)
		}
		require.Equal(t, int32(1), patches.Load(), "a labelled cm-0 for itself")
		cancel()
		require.NoError(t, <-done)

		key := Key{Namespace: "demo", Name: "cm-0"}
		rctx := context.WithValue(context.Background(), reconcileKey{}, keyRef{"cms", key})
		err = m.scans[0].label.patch(rctx, key, "")
		require.True(t, kube.IsFenced(err), "a relabel after the replica left the ring: %v", err)
		require.Equal(t, int32(1), patches.Load(), "the refused relabel never reached the server")
	})
}

// memClient serves srv to a client of its own over a MemNet named name;
// seen is told of every request the server receives.
func memClient(t *testing.T, srv *sim.Server, name string, seen func(*http.Request)) *kube.Client {
	t.Helper()
	mn := &testutil.MemNet{}
	ln, err := mn.Listen(name + ":80")
	require.NoError(t, err)
	h := srv.Handler()
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		seen(req)
		h.ServeHTTP(w, req)
	})}
	served := make(chan struct{})
	go func() { _ = hs.Serve(ln); close(served) }()
	tr := mn.Transport()
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		_ = hs.Close()
		<-served
	})
	kc, err := kube.NewClient(&kube.Config{Host: "http://" + name + ":80", HTTP: kube.HTTPConfig{Transport: tr}})
	require.NoError(t, err)
	return kc
}
