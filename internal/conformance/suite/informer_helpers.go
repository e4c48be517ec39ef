package suite

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// convergeLimit bounds how long an informer may take to match the server.
const convergeLimit = 3 * time.Minute

// runInformer builds an informer on the case's namespace, runs it until
// the case ends (cleanup cancels it and waits for Run to return) and waits
// for its first sync.
func runInformer[O watch.Object](t T, e *Env, opts informer.Options[O]) *informer.Informer[O] {
	t.Helper()
	opts.Resource, opts.Namespace = kube.Pods, e.NS
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	inf, err := informer.New(opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(e.Ctx)
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = inf.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		if runErr != nil && ctx.Err() == nil {
			t.Errorf("informer Run: %v", runErr)
		}
	})
	syncCtx, syncCancel := context.WithTimeout(e.Ctx, convergeLimit)
	defer syncCancel()
	require.True(t, inf.WaitForSync(syncCtx), "informer did not sync within %v (health %+v)", convergeLimit, inf.Health())
	return inf
}

// serverState lists the namespace consistently: name -> resourceVersion.
func serverState(t T, e *Env) map[string]string {
	t.Helper()
	items, _ := listAll[*metav1.PartialObjectMetadata](t, e, e.Admin, watch.ListOptions{MetadataOnly: true, Limit: 500})
	return rvsByName(items)
}

func rvsByName[O watch.Object](objs []O) map[string]string {
	m := make(map[string]string, len(objs))
	for _, o := range objs {
		m[o.GetName()] = o.GetResourceVersion()
	}
	return m
}

// requireConverges waits until every view in views holds exactly the
// server's state (same names, same resourceVersions).
func requireConverges(t T, e *Env, views map[string]func() map[string]string) {
	t.Helper()
	want := serverState(t, e)
	for name, view := range views {
		var got map[string]string
		ctx, cancel := context.WithTimeout(e.Ctx, convergeLimit)
		tick := time.NewTicker(200 * time.Millisecond)
		for got = view(); !maps.Equal(got, want); got = view() {
			select {
			case <-ctx.Done():
				tick.Stop()
				cancel()
				require.FailNow(t, "no convergence", "%s after %v: %s", name, convergeLimit, diffStates(got, want))
			case <-tick.C:
			}
		}
		tick.Stop()
		cancel()
	}
}

// diffStates says how got differs from want, briefly.
func diffStates(got, want map[string]string) string {
	var missing, extra, stale []string
	for k, rv := range want {
		switch g, ok := got[k]; {
		case !ok:
			missing = append(missing, k)
		case g != rv:
			stale = append(stale, k+"@"+g+"!="+rv)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	return fmt.Sprintf("%d objects, want %d; missing %s; extra %s; stale %s",
		len(got), len(want), firstFew(missing), firstFew(extra), firstFew(stale))
}

func firstFew(s []string) string {
	sort.Strings(s)
	if len(s) > 5 {
		return fmt.Sprintf("%v... (%d)", s[:5], len(s))
	}
	return fmt.Sprint(s)
}

// storeView reads an informer's store as name -> resourceVersion.
func storeView[O watch.Object](inf *informer.Informer[O]) func() map[string]string {
	return func() map[string]string { return rvsByName(inf.Store().List()) }
}

// handlerView is what a handler has been told, kept as name -> RV.
type handlerView[O watch.Object] struct {
	mu    sync.Mutex
	state map[string]string // the newest state each handler call gave
}

func newHandlerView[O watch.Object]() *handlerView[O] {
	return &handlerView[O]{state: map[string]string{}}
}

func (h *handlerView[O]) OnAdd(obj O, _ bool) { h.set(obj) }
func (h *handlerView[O]) OnUpdate(_, obj O)   { h.set(obj) }
func (h *handlerView[O]) OnDelete(obj O, _ bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.state, obj.GetName())
}

func (h *handlerView[O]) set(obj O) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.state[obj.GetName()] = obj.GetResourceVersion()
}

func (h *handlerView[O]) view() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.state)
}
