package events

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// env is a simulator serving events on an in-memory network, a client of
// it, and a recorder with its Run going, all inside a synctest bubble:
// the test reads time.Now as fake time and synctest.Wait lets Run write
// everything queued.
type env struct {
	net    *testutil.MemNet
	srv    *sim.Server
	client *kube.Client
	rec    *Recorder
	events *client.Client[*Event]
}

// newEnv starts it; opts.Client is filled in. Run ends with the test.
func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	n := &testutil.MemNet{}
	srv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	ln, err := n.Listen("sim:80")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	tr := n.Transport()
	c, err := kube.NewClient(&kube.Config{Host: "http://sim:80", HTTP: kube.HTTPConfig{Transport: tr}})
	require.NoError(t, err)
	opts.Client = c
	rec, err := New(opts)
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- rec.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-ran)
		tr.CloseIdleConnections()
		cancel()
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("sim: %v", err)
		}
	})
	return &env{net: n, srv: srv, client: c, rec: rec, events: client.For(c, kube.Typed[*Event](kube.Events), client.Options{})}
}

// stored lists the Events in ns.
func (e *env) stored(t *testing.T, ns string) []*Event {
	t.Helper()
	page, err := e.events.List(context.Background(), kube.Scope{Namespace: ns}, watch.ListOptions{})
	require.NoError(t, err)
	return page.Items
}

// pod is a reference to a pod, as a reconcile would have it.
func pod(name string) ObjectReference {
	return ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "demo", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "7"}
}

// t0 is where a synctest bubble's clock starts.
var t0 = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// configMaps is the resource Ref is tested with, paired with the slim
// metadata-only type.
var configMaps = kube.Typed[*metav1.PartialObjectMetadata](kube.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true})
