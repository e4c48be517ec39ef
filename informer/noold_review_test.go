package informer

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/watch"
)

// checkView is a handler that applies its calls to a map and records any
// call that does not start from what it was given. It pauses a little in
// each call (fake time), so that changes pile up behind it: coalesced,
// and past a small Ordered buffer.
type checkView struct {
	name  string
	noOld bool
	rng   *rand.Rand
	mu    sync.Mutex
	seen  map[string]string
	errs  []string
	log   []string
}

func (v *checkView) pause() {
	d := time.Duration(v.rng.IntN(4)) * time.Millisecond
	if v.rng.IntN(10) == 0 {
		d = 20 * time.Millisecond
	}
	time.Sleep(d)
}

func (v *checkView) OnAdd(p *testPod, initial bool) {
	v.pause()
	v.mu.Lock()
	defer v.mu.Unlock()
	k := key(p)
	v.log = append(v.log, fmt.Sprintf("add %s@%s", k, p.ResourceVersion))
	if rv, ok := v.seen[k]; ok {
		v.errs = append(v.errs, fmt.Sprintf("add of %s@%s, given %s", k, p.ResourceVersion, rv))
	}
	v.seen[k] = p.ResourceVersion
}

func (v *checkView) OnUpdate(old, p *testPod) {
	v.pause()
	v.mu.Lock()
	defer v.mu.Unlock()
	k := key(p)
	v.log = append(v.log, fmt.Sprintf("update %s->%s", k, p.ResourceVersion))
	rv, ok := v.seen[k]
	switch {
	case !ok:
		v.errs = append(v.errs, fmt.Sprintf("update of %s@%s, never given", k, p.ResourceVersion))
	case v.noOld && old != nil:
		v.errs = append(v.errs, fmt.Sprintf("update of %s with an old object", k))
	case !v.noOld && (old == nil || old.ResourceVersion != rv):
		v.errs = append(v.errs, fmt.Sprintf("update of %s from %v, given %s", k, old, rv))
	}
	v.seen[k] = p.ResourceVersion
}

func (v *checkView) OnDelete(p *testPod, unknown bool) {
	v.pause()
	v.mu.Lock()
	defer v.mu.Unlock()
	k := key(p)
	v.log = append(v.log, fmt.Sprintf("delete %s@%s", k, p.ResourceVersion))
	if _, ok := v.seen[k]; !ok {
		v.errs = append(v.errs, fmt.Sprintf("delete of %s@%s, never given", k, p.ResourceVersion))
	}
	delete(v.seen, k)
}

func reviewPod(name, rv, uid string, bad bool) string {
	node := `"n1"`
	if bad {
		node = "5"
	}
	return fmt.Sprintf(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":%q,"namespace":"ns","resourceVersion":%q,"uid":%q},"spec":{"nodeName":%s}}`,
		name, rv, uid, node)
}

func reviewRaw(t *testing.T, s string) *watch.Raw {
	r := new(watch.Raw)
	require.NoError(t, r.UnmarshalJSON([]byte(s)))
	return r
}

// TestReviewNoOldModel drives a compact informer's store directly (watch
// events with versions that do and do not decode, deletes and re-creates,
// relists, resyncs, late handlers, reads) while Coalesce and Ordered
// handlers with and without NoOld run, and checks that each call starts
// from what the handler was given, that each ends with the store's
// decodable objects, and that decodingHandler.given holds only keys
// stored at a version that does not decode.
func TestReviewNoOldModel(t *testing.T) {
	for seed := range uint64(1000) {
		synctest.Test(t, func(t *testing.T) { reviewModel(t, seed) })
		if t.Failed() {
			return
		}
	}
}

func reviewModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	opts := fastOptions("http://api:80", t, ListPaged) // never asked: the test applies changes itself
	opts.Store = StoreCompact
	opts.DecodeCache = []int{-1, 1, 2, 0}[rng.IntN(4)]
	inf, err := New(opts)
	require.NoError(t, err)
	raw := inf.compact.raw
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var views []*checkView
	var regs []Registration
	addHandler := func() {
		v := &checkView{noOld: rng.IntN(2) == 0, rng: rand.New(rand.NewPCG(rng.Uint64(), 1)), seen: map[string]string{}}
		d := Delivery(rng.IntN(2))
		v.name = fmt.Sprintf("h%d/d=%d/noOld=%t", len(views), d, v.noOld)
		reg, err := inf.AddHandler(v, HandlerOptions{Delivery: d, Buffer: 1 + rng.IntN(3), NoOld: v.noOld, Resync: true})
		require.NoError(t, err)
		views = append(views, v)
		regs = append(regs, reg)
		go reg.(*registration[*watch.Raw]).q.run(ctx)
	}
	for range 1 + rng.IntN(3) {
		addHandler()
	}

	names := []string{"a", "b", "c"}
	server := map[string]string{} // name -> JSON
	uids := map[string]int{}
	rv := 100
	next := func() string { rv++; return strconv.Itoa(rv) }
	version := func(name string, newUID bool) string {
		if newUID {
			uids[name]++
		}
		return reviewPod(name, next(), fmt.Sprintf("u-%s-%d", name, uids[name]), rng.IntN(3) == 0)
	}
	relist := func() {
		for _, n := range names {
			switch rng.IntN(4) {
			case 0:
				delete(server, n)
			case 1:
				server[n] = version(n, rng.IntN(4) == 0)
			}
		}
		repl := raw.store.NewReplacement()
		for _, n := range names {
			if s, ok := server[n]; ok {
				raw.addListed(repl, reviewRaw(t, s))
			}
		}
		raw.commit(repl, next(), false)
	}
	relist()
	var trace []string
	for range 80 {
		time.Sleep(time.Duration(rng.IntN(3)) * time.Millisecond)
		n := names[rng.IntN(len(names))]
		switch op := rng.IntN(10); {
		case op < 5:
			_, existed := server[n]
			s := version(n, !existed)
			server[n] = s
			typ := watch.Added
			if existed {
				typ = watch.Modified
			}
			trace = append(trace, string(typ)+" "+s)
			raw.apply(state{}, watch.Event[*watch.Raw]{Type: typ, Object: reviewRaw(t, s)})
		case op < 7:
			if _, ok := server[n]; !ok {
				continue
			}
			delete(server, n)
			s := reviewPod(n, next(), fmt.Sprintf("u-%s-%d", n, uids[n]), rng.IntN(2) == 0)
			trace = append(trace, "DELETED "+s)
			raw.apply(state{}, watch.Event[*watch.Raw]{Type: watch.Deleted, Object: reviewRaw(t, s)})
		case op < 8:
			trace = append(trace, "relist")
			relist()
		case op < 9:
			trace = append(trace, "resync")
			raw.resync()
		default:
			if rng.IntN(2) == 0 {
				trace = append(trace, "addHandler")
				addHandler()
			} else {
				_, _ = inf.Store().Get("ns/" + n)
			}
		}
	}
	time.Sleep(time.Minute)
	synctest.Wait()

	// What each handler must end with: every stored object that decodes,
	// at its version; nothing the store does not hold.
	want := map[string]string{}
	for k, o := range inf.Store().Snapshot() {
		want[k] = o.GetResourceVersion()
	}
	stored := map[string]bool{}
	for _, k := range raw.store.ListKeys() {
		stored[k] = true
	}
	for i, v := range views {
		v.mu.Lock()
		errs := append([]string(nil), v.errs...)
		for k, r := range v.seen {
			if !stored[k] {
				errs = append(errs, fmt.Sprintf("keeps %s@%s, not stored", k, r))
			}
		}
		for k, r := range want {
			if v.seen[k] != r {
				errs = append(errs, fmt.Sprintf("has %s@%q, store %s", k, v.seen[k], r))
			}
		}
		log := v.log
		v.mu.Unlock()
		// given holds only keys stored at a version that does not decode.
		var h Handler[*watch.Raw]
		switch q := regs[i].(*registration[*watch.Raw]).q.(type) {
		case *handlerQueue[*watch.Raw]:
			h = q.h
		case *orderedQueue[*watch.Raw]:
			h = q.h
		}
		for k := range h.(*decodingHandler[*testPod]).given {
			if r, ok := raw.store.Get(k); !ok {
				errs = append(errs, fmt.Sprintf("given holds %s, not stored", k))
			} else if _, err := inf.compact.codec.Decode(r); err == nil {
				errs = append(errs, fmt.Sprintf("given holds %s, stored at %s, which decodes", k, r.GetResourceVersion()))
			}
		}
		if len(errs) > 0 {
			sort.Strings(errs)
			t.Errorf("seed %d, %s: %v\ntrace: %v\nlog: %v", seed, v.name, errs, trace, log)
		}
	}
}

// TestReviewNoOldNeverGivenGetsNoDelete: a handler that was never given an
// object must not be told of its delete (TestCompactHandlerGetsEveryDelete:
// "A handler that never saw the object gets nothing"). In a compact store
// a handler whose only version of a did not decode is given nothing; when
// a's delete then carried a final state that decodes, decodingHandler.remove
// delivered OnDelete for it anyway: it checked the final state's decode
// before what the handler was given. It now asks lastGiven first (given[key]
// held with nil says "none"). With and without NoOld, with either delivery;
// the bug predated NoOld.
//
// Sequence: ADDED a@11 (does not decode; delivered, not given), the
// handler has taken it, DELETED a@12 (decodes) -> OnDelete(a@12).
func TestReviewNoOldNeverGivenGetsNoDelete(t *testing.T) {
	for _, d := range []Delivery{Coalesce, Ordered} {
		for _, noOld := range []bool{false, true} {
			t.Run(fmt.Sprintf("delivery=%d/noOld=%t", d, noOld), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					n := &testutil.MemNet{}
					rec := &recorderT{}
					var inf *Informer[*testPod]
					newMemScripted(t, n, "api:80",
						answer(200, listJSON("10", "")),
						func(w http.ResponseWriter, r *http.Request) {
							w.Header().Set("Content-Type", "application/json")
							fmt.Fprint(w, eventJSON("ADDED", badPodJSON("a", "11")))
							w.(http.Flusher).Flush()
							// Once the handler has taken a@11 (and failed to decode it).
							for inf.Stats().DecodeErrors < 1 {
								time.Sleep(tick)
							}
							fmt.Fprint(w, eventJSON("DELETED", podJSON("a", "12")))
							w.(http.Flusher).Flush()
							<-r.Context().Done()
						},
					)
					opts := memOptions(t, n, "api:80")
					opts.Store = StoreCompact
					var err error
					inf, err = New(opts)
					require.NoError(t, err)
					_, err = inf.AddHandler(rec, HandlerOptions{Delivery: d, NoOld: noOld})
					require.NoError(t, err)
					start(t, inf)
					time.Sleep(time.Minute)
					synctest.Wait()
					require.Empty(t, inf.RawStore().ListKeys(), "a is deleted")
					require.Empty(t, rec.get(), "the handler was never given a")
				})
			})
		}
	}
}
