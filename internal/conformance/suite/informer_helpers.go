package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"reflect"
	"slices"
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

// storeMode is one way an informer keeps its store, and the prefix of the
// names of the cases run in it.
type storeMode struct {
	prefix string
	mode   informer.StoreMode
}

// storeModes are the modes every informer case runs in: informer/... in
// StoreTyped and informer-compact/... in StoreCompact.
var storeModes = []storeMode{
	{prefix: "informer", mode: informer.StoreTyped},
	{prefix: "informer-compact", mode: informer.StoreCompact},
}

func (m storeMode) compact() bool { return m.mode == informer.StoreCompact }

// runInformer builds an informer on the case's namespace, runs it until
// the case ends (cleanup cancels it and waits for Run to return) and waits
// for its first sync.
func runInformer[O watch.Object](t T, e *Env, opts informer.Options[O]) *informer.Informer[O] {
	t.Helper()
	inf, _ := startInformer(t, e, opts, nil)
	return inf
}

// startInformer builds an informer on the case's namespace with opts,
// registers h (if not nil) before Run so that it gets the initial list,
// runs it and waits for it to sync. stop cancels it and waits for Run to
// return, failing t if Run failed; cleanup calls it too, so a case need not.
func startInformer[O watch.Object](t T, e *Env, opts informer.Options[O], h informer.Handler[O]) (inf *informer.Informer[O], stop func()) {
	t.Helper()
	opts.Resource, opts.Scope.Namespace = kube.Pods, e.NS
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	inf, err := informer.New(opts)
	require.NoError(t, err)
	if h != nil {
		_, err = inf.AddHandler(h, informer.HandlerOptions{Delivery: informer.Ordered})
		require.NoError(t, err)
	}
	ctx, cancel := context.WithCancel(e.Ctx)
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = inf.Run(ctx) })
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			if runErr != nil {
				t.Errorf("informer Run: %v", runErr)
			}
		})
	}
	t.Cleanup(stop)
	syncCtx, syncCancel := context.WithTimeout(e.Ctx, convergeLimit)
	defer syncCancel()
	require.True(t, inf.WaitForSync(syncCtx), "informer did not sync within %v (health %+v, stats %+v)", convergeLimit, inf.Health(), inf.Stats())
	return inf, stop
}

// serverState lists the namespace consistently: name -> resourceVersion.
func serverState(t T, e *Env) map[string]string {
	t.Helper()
	items, _ := listAll[*metav1.PartialObjectMetadata](t, e, e.Admin, watch.ListOptions{Form: watch.FormMetadata, Limit: 500})
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

// storeView reads an informer's store as name -> resourceVersion. In
// StoreCompact, List decodes every object, so one that does not decode is
// missing from the view.
func storeView[O watch.Object](inf *informer.Informer[O]) func() map[string]string {
	return func() map[string]string { return rvsByName(inf.Store().List()) }
}

// storeViews are the views of inf to compare with the server: its store
// and, in StoreCompact, also the raw store it decodes from.
func storeViews[O watch.Object](name string, inf *informer.Informer[O], m storeMode) map[string]func() map[string]string {
	views := map[string]func() map[string]string{name: storeView(inf)}
	if m.compact() {
		views[name+" (raw store)"] = func() map[string]string { return rvsByName(inf.RawStore().List()) }
	}
	return views
}

// mergeViews joins view sets.
func mergeViews(sets ...map[string]func() map[string]string) map[string]func() map[string]string {
	out := map[string]func() map[string]string{}
	for _, s := range sets {
		maps.Copy(out, s)
	}
	return out
}

// requireCompactHealthy checks a compact informer decoded every object it
// was asked for: a failure would leave an object out of what readers see.
func requireCompactHealthy[O watch.Object](t T, name string, inf *informer.Informer[O], m storeMode) {
	t.Helper()
	if !m.compact() {
		return
	}
	st := inf.Stats()
	require.Zero(t, st.DecodeErrors, "%s: objects that did not decode (health %+v)", name, inf.Health())
	require.Positive(t, st.Decodes, "%s: a compact store that never decoded", name)
}

// requireRawEncoding checks how a compact store keeps its objects: as the
// protobuf messages the real server sends a protobuf type, as JSON for a
// JSON-only type and for everything the simulator (JSON only) sends.
func requireRawEncoding[O watch.Object](t T, e *Env, name string, inf *informer.Informer[O], protobufType bool) {
	t.Helper()
	want := protobufType && e.Target.Name() == "real"
	raws := inf.RawStore().List()
	require.NotEmpty(t, raws, "%s: empty raw store", name)
	for _, r := range raws {
		require.Equal(t, want, r.Protobuf(), "%s: %s kept as protobuf", name, r.GetName())
	}
}

// requireSameObjects waits until every object of inf's store equals the
// server's, field for field (as JSON, without kind and apiVersion, which a
// list's items lack and a watch event's object has): an RV alone would not
// tell a store that decodes an object wrongly.
func requireSameObjects[O watch.Object](t T, e *Env, c *kube.Client, lo watch.ListOptions, name string, inf *informer.Informer[O]) {
	t.Helper()
	var problem string
	ok := pollUntil(e, convergeLimit, func() bool {
		items, _ := listAll[O](t, e, c, lo)
		want := normalizedByName(t, items)
		got := normalizedByName(t, inf.Store().List())
		problem = ""
		if len(got) != len(want) {
			problem = fmt.Sprintf("%d objects, the server has %d", len(got), len(want))
			return false
		}
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if g, ok := got[k]; !ok || !reflect.DeepEqual(g, want[k]) {
				problem = fmt.Sprintf("%s differs:\nstore:  %v\nserver: %v", k, g, want[k])
				return false
			}
		}
		return true
	})
	require.True(t, ok, "%s: store not equal to the server after %v: %s", name, convergeLimit, problem)
}

func normalizedByName[O watch.Object](t T, objs []O) map[string]map[string]any {
	t.Helper()
	out := make(map[string]map[string]any, len(objs))
	for _, o := range objs {
		b, err := json.Marshal(o)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		delete(m, "kind")
		delete(m, "apiVersion")
		out[o.GetName()] = m
	}
	return out
}

// pollUntil calls cond every 200 ms until it is true (true) or limit or
// the case's budget ends (false).
func pollUntil(e *Env, limit time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(e.Ctx, limit)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return cond()
		case <-tick.C:
		}
	}
	return true
}

// handlerView is what a handler has been told, kept as name -> RV.
type handlerView[O watch.Object] struct {
	mu    sync.Mutex
	state map[string]string // the newest state each handler call gave
	olds  int               // updates whose old object was not the zero O
}

func newHandlerView[O watch.Object]() *handlerView[O] {
	return &handlerView[O]{state: map[string]string{}}
}

func (h *handlerView[O]) OnAdd(obj O, _ bool) { h.set(obj) }
func (h *handlerView[O]) OnUpdate(old, obj O) {
	if !reflect.ValueOf(&old).Elem().IsZero() {
		h.mu.Lock()
		h.olds++
		h.mu.Unlock()
	}
	h.set(obj)
}

// oldsGiven is how many updates came with an old object.
func (h *handlerView[O]) oldsGiven() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.olds
}
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

// handlerCall is one handler call a callLog kept.
type handlerCall struct {
	op   string // "add", "update" or "delete"
	name string
	rv   string
	flag bool // add: inInitialList; delete: finalStateUnknown
}

// callLog is an Ordered handler that keeps every call, for the snapshot
// cases to say what a restarted informer delivered.
type callLog[O watch.Object] struct {
	mu    sync.Mutex
	calls []handlerCall
}

func (l *callLog[O]) OnAdd(o O, initial bool) { l.add("add", o, initial) }
func (l *callLog[O]) OnUpdate(_, o O)         { l.add("update", o, false) }
func (l *callLog[O]) OnDelete(o O, unknown bool) {
	l.add("delete", o, unknown)
}

func (l *callLog[O]) add(op string, o O, flag bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, handlerCall{op: op, name: o.GetName(), rv: o.GetResourceVersion(), flag: flag})
}

func (l *callLog[O]) get() []handlerCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// view replays the calls as name -> RV, checking each against the state
// before it: an add of a name held, or an update or delete of one not
// held, is a contradiction, returned in bad.
func (l *callLog[O]) replay() (state map[string]string, bad []string) {
	state = map[string]string{}
	for _, c := range l.get() {
		_, held := state[c.name]
		switch {
		case c.op == "add" && held, c.op != "add" && !held:
			bad = append(bad, fmt.Sprintf("%s of %s@%s", c.op, c.name, c.rv))
		}
		if c.op == "delete" {
			delete(state, c.name)
		} else {
			state[c.name] = c.rv
		}
	}
	return state, bad
}

func (l *callLog[O]) view() map[string]string {
	state, _ := l.replay()
	return state
}
