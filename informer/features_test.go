package informer

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

func loadPods(t *testing.T, srv *sim.Server, n int) {
	for i := 0; i < n; i++ {
		_, err := srv.PutPod(sim.Pod{Namespace: fmt.Sprintf("ns-%d", i%2), Name: fmt.Sprintf("p-%d", i), NodeName: "node-1"})
		require.NoError(t, err)
	}
}

// TestNewRefusesAnUnknownForm: a Form that is none of watch's constants
// is an error from New, not a list that fails on every retry.
func TestNewRefusesAnUnknownForm(t *testing.T) {
	c, err := kube.NewClient(&kube.Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	_, err = New(Options[*metav1.PartialObjectMetadata]{Client: c, Resource: kube.Pods, Form: watch.FormTableObject + 1})
	require.ErrorContains(t, err, "Options.Form Form(4)")
}

func TestMetadataOnlyMode(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	loadPods(t, h.Server, 10)
	c, err := kube.NewClient(&kube.Config{Host: h.URL})
	require.NoError(t, err)
	for _, mode := range []ListMode{ListPaged, ListAuto} {
		inf, err := New(Options[*metav1.PartialObjectMetadata]{Client: c, Resource: kube.Pods, Form: watch.FormMetadata, Logger: quietLogger(),
			Tuning: Tuning{ListMode: mode},
		})
		require.NoError(t, err)
		cancel := start(t, inf)
		require.True(t, inf.WaitForSync(ctxTimeout(t)))
		_, err = h.Server.PutPod(sim.Pod{Namespace: "ns-0", Name: "late"})
		require.NoError(t, err)
		require.Eventually(t, func() bool { return inf.Store().Len() == 11 }, waitLong, tick)
		obj, ok := inf.Store().Get("ns-0/late")
		require.True(t, ok)
		require.Equal(t, "PartialObjectMetadata", obj.Kind, "the server sent metadata only")
		require.NotEmpty(t, obj.Labels)
		cancel()
	}
}

func TestTransformAndIndexers(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	loadPods(t, h.Server, 6)
	opts := simOptions(t, h.URL, ListPaged)
	opts.Transform = func(p *testPod) (*testPod, error) {
		p.ManagedFields = nil
		if p.Name == "p-5" {
			return nil, fmt.Errorf("refused")
		}
		return p, nil
	}
	opts.Indexers = map[string]store.IndexFunc[*testPod]{
		"node": func(p *testPod) ([]string, error) { return []string{p.Spec.NodeName}, nil },
	}
	inf, err := New(opts)
	require.NoError(t, err)
	start(t, inf)
	require.True(t, inf.WaitForSync(ctxTimeout(t)))
	require.Equal(t, 5, inf.Store().Len(), "the object the transform refused is not cached")
	byNode, err := inf.Store().ByIndex("node", "node-1")
	require.NoError(t, err)
	require.Len(t, byNode, 5)
	for _, p := range byNode {
		require.Nil(t, p.ManagedFields)
	}
	inNs, err := inf.Store().ByIndex(store.NamespaceIndex, "ns-0")
	require.NoError(t, err)
	require.Len(t, inNs, 3)
	require.EqualValues(t, 1, inf.Stats().TransformErrors)
}

func TestResyncRedeliversObjects(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	loadPods(t, h.Server, 3)
	opts := simOptions(t, h.URL, ListPaged)
	opts.ResyncPeriod = 20 * time.Millisecond
	inf, err := New(opts)
	require.NoError(t, err)
	var resyncs atomic.Int64
	_, err = inf.AddHandler(HandlerFuncs[*testPod]{UpdateFunc: func(old, new *testPod) {
		if old == new {
			resyncs.Add(1)
		}
	}}, HandlerOptions{Resync: true})
	require.NoError(t, err)
	start(t, inf)
	require.Eventually(t, func() bool { return resyncs.Load() >= 6 }, waitLong, tick)
}

func TestRunReturnsAllGoroutines(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	loadPods(t, h.Server, 5)
	opts := simOptions(t, h.URL, ListAuto)
	opts.ResyncPeriod = time.Hour
	// Earlier tests' informers may still be winding down their goroutines.
	require.Eventually(t, func() bool { return len(engineGoroutines()) == 0 }, waitLong, tick,
		"goroutines left by earlier tests: %v", engineGoroutines())
	inf, err := New(opts)
	require.NoError(t, err)
	require.Empty(t, engineGoroutines(), "New starts no goroutine")
	for i := 0; i < 3; i++ {
		_, err := inf.AddHandler(newReplayer(), HandlerOptions{})
		require.NoError(t, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	require.True(t, inf.WaitForSync(ctxTimeout(t)))
	_, err = inf.AddHandler(newReplayer(), HandlerOptions{}) // a late handler's goroutine is Run's too
	require.NoError(t, err)
	require.ErrorIs(t, inf.Run(ctx), ErrAlreadyRunning)
	cancel()
	require.NoError(t, <-done)
	c := opts.Client
	c.CloseIdleConnections()
	require.Eventually(t, func() bool { return len(engineGoroutines()) == 0 }, waitLong, tick,
		"goroutines of the informer or its watch still running after Run returned: %v", engineGoroutines())
}

// engineGoroutines returns the stacks of goroutines running informer or
// watch code, other than the calling test's.
func engineGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 { // the calling goroutine
			continue
		}
		if strings.Contains(g, "kwatch/informer.(*") || strings.Contains(g, "kwatch/watch.(*") {
			out = append(out, g)
		}
	}
	return out
}
