package controller

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
)

// DefaultExpectationTimeout is ManagerOptions.ExpectationTimeout's
// default: how long a key's next reconcile, or a read of an object this
// process wrote, waits for the caches to show the write.
const DefaultExpectationTimeout = 30 * time.Second

// This file is the one place of the expectations policy: which writes a
// reconcile waits for, what shows them, and for how long.
//
//   - A write made through the manager's client by a reconcile (its
//     context carries the key) is recorded against that controller's key:
//     the object, the resourceVersion the server returned, for a delete
//     the uid that must go. Only the caches of the written resource whose
//     scope holds the object must show it; a write no cache of the
//     manager holds is not waited for, nor is one whose resourceVersion
//     is not a decimal number (an aggregated server's may be anything).
//     A write of unknown outcome waits until the server can no longer
//     apply it, then on every cache of its resource in its namespace, for
//     the server's resourceVersion read then (expect_uncertain.go).
//   - A cache shows a write when its store has applied the returned
//     resourceVersion or a later one (the store's own resourceVersion, which
//     bookmarks advance too, or the object's), or, for a delete, when it no
//     longer holds the object with that uid, or holds it with a
//     deletionTimestamp (a graceful delete), once it has reached the
//     version of the object the delete's answer showed: a cache behind it
//     may be yet to see that incarnation come (expect_floor.go), so a
//     delete waits on those of its resource that take the object too.
//   - A write that follows one of the same object that some cache has
//     not shown yet (a create, then its delete or a relabel out of that
//     cache's scope) waits on that cache too: the object is still to come
//     to it, and it shows the later write only once it has passed the
//     earlier one.
//   - The key's next reconcile runs only once every cache shows every
//     recorded write, or once the bound has passed since its last write
//     (for a write of unknown outcome, since that read; counted in kwatch_expectation_timeouts_total and logged with what was
//     not seen). Until then the key is parked: it takes no worker, and the
//     cache event that shows its last write queues it again; a cache that
//     shows it with no event of the object (a bookmark, a relist past it)
//     is noticed within a second (expect_recheck.go); at the bound its
//     timer does. Other keys run meanwhile. A parked retry leaves the key's
//     backoff as it was (expect_backoff.go). When the controllers stop,
//     every wait ends.
//   - A Reader's Get of an object this process wrote waits, bounded the same
//     way and by the context, until its cache shows the write. Past the
//     bound it gets a *NotShownError at once, for as long as the cache
//     does not show the write: the write is kept for reads until every
//     cache shows it or a later write of the object replaces it, though
//     keys forget it at the bound. A cache that is not among the write's
//     (out of its scope, yet to see another writer's version of the object
//     come into it; or built after the write) is waited for by a read only
//     while it holds the object older than the write, and the write is
//     kept for such reads until every cache that may hold the object has
//     passed it; Get compares what it read with the write it waited for
//     (expect_readers.go). A write of unknown outcome is not waited for.
//     A delete answered with a Status (which names no version) reads the
//     server's resourceVersion after the answer, and a read does not
//     return the object from a cache below it; a holder of another
//     incarnation shows the delete once it has passed it, or shown the
//     deleted incarnation come and go (expect_floor.go). Open: a cache
//     built after the write was dropped, whose first list (resourceVersion
//     "0") comes from a watch cache behind it; and, when the read of the
//     server's version fails, what a Status delete leaves (the review
//     tests' skipped cases and log).

// resKey names a resource whatever its version: a write through v1 and a
// cache through v1beta1 are the same objects.
type resKey struct{ group, resource string }

func resKeyOf(r kube.Resource) resKey { return resKey{r.Group, r.Resource} }

// objRef names one object of one resource by its store key.
type objRef struct {
	res resKey
	key string // "namespace/name", or "name" when cluster-scoped
}

func (o objRef) String() string {
	if o.res.group == "" {
		return o.res.resource + " " + o.key
	}
	return o.res.resource + "." + o.res.group + " " + o.key
}

// keyRef is one controller's key.
type keyRef struct {
	ctl string
	key Key
}

// pendingWrite is a recorded write that some cache has not shown yet.
type pendingWrite struct {
	ref objRef
	rv  uint64 // the returned resourceVersion; 0 for a delete
	// delRV is, for a delete, the resourceVersion of the object its
	// answer showed; 0 for a Status answer (or one not a decimal number).
	delRV   uint64
	uid     string
	deleted bool
	// keepRV is, for a delete, the version its answer showed (delRV) or
	// that of the write it replaced for reads, the higher: the caches that
	// may hold the object must pass it before the delete is dropped, and a
	// read does not return the object below it (expect_readers.go); 0:
	// none. Set before the write is in expectations' maps.
	keepRV uint64
	// gone are, for a delete, the other incarnations of the object that
	// the deletes it replaced deleted: a cache holding one of them shows
	// the delete no more than one holding its uid. Set before the write is
	// in expectations' maps.
	gone []string
	// after is, for a delete answered with a Status, the server's
	// resourceVersion read after the answer (expect_floor.go): a cache
	// past it shows the delete, whatever it holds. 0: none.
	after  uint64
	at     time.Time
	caches []*cacheEntry // the caches that must show it; guarded by expectations.mu
	// floors are the caches that show w only once the object is gone
	// from them (for a write that is not a delete, those it takes the
	// object out of, which get no event of it), each with the
	// resourceVersion it must reach first: a cache that had not shown this
	// process's earlier write of the object when w was made is still to
	// see the object come (0: nothing to reach). Guarded by
	// expectations.mu.
	floors []floor
	// uncertain is set for a write of unknown outcome
	// (expect_uncertain.go); its fields are guarded by expectations.mu.
	uncertain *uncertainOutcome
}

func (w *pendingWrite) String() string {
	if w.uncertain != nil {
		return w.uncertain.String()
	}
	if w.deleted {
		return fmt.Sprintf("delete of %s (uid %s)", w.ref, w.uid)
	}
	return fmt.Sprintf("%s at resourceVersion %d", w.ref, w.rv)
}

// keyWait is what a key waits for.
type keyWait struct {
	writes []*pendingWrite // not yet shown by every cache; the latest write per object
	last   time.Time       // the last write's time: the bound runs from it
	add    func(Key)       // set while the key is parked: queues it again
	timer  *time.Timer     // the bound's timer, while parked
	// fresh: a write was added, or the key parked, since the last re-check
	// of writes shown without an event (expect_recheck.go), which must
	// then look at it whatever its caches' resourceVersions.
	fresh bool
}

// expectations records a manager's writes and gates its keys on them.
type expectations struct {
	timeout time.Duration // <= 0: nothing is recorded
	log     *slog.Logger
	metrics metrics.Provider // nil: none

	mu    sync.Mutex
	keys  map[keyRef]*keyWait            // guarded by mu
	byObj map[objRef]map[keyRef]struct{} // the keys waiting on each object; guarded by mu
	// objects holds the latest write of each object that some cache has
	// not shown yet, for reads (waitShown): one entry per object, dropped
	// only when every cache shows it (pruneLocked) or a later write of the
	// object replaces it (add); never at the bound, or a read past it
	// would return the cache's older object. Guarded by mu.
	objects map[objRef]*pendingWrite
	changed chan struct{} // closed (and replaced) when a cache shows a write; guarded by mu
	// watched: a read waits on changed, so the next event closes it
	// (else no event pays for a new channel). Guarded by mu.
	watched bool
	// recent holds the writes in the order they were recorded, so that
	// those past the bound are dropped although no cache ever showed them
	// (an object a webhook moved out of scope): keys and byObj stay
	// bounded by the writes of one bound's length. Guarded by mu.
	recent []recorded
	// overdue holds the objects whose write in objects has left recent
	// (its bound passed) while some cache did not show it yet: a read of
	// the object gets a *NotShownError at once. A cache may come to show
	// such a write without an event of its object (its resourceVersion
	// passes it through other objects' events or a bookmark), so these are
	// re-checked, at most once per overdueRecheck, when a write is
	// recorded or a cache applies an event (recheckOverdueLocked). A subset
	// of objects' keys, so one entry per object; what bounds both is how
	// far the caches lag: a cache whose watch runs passes every version
	// within a bookmark interval (about a minute), so they hold the
	// objects written during its lag and the bound. A cache that never
	// moves on (its manager stopped) keeps them, and a read of them gets
	// the error, which is true. Guarded by mu.
	overdue map[objRef]struct{}
	// overdueChecked is when overdue was last re-checked. Guarded by mu.
	overdueChecked time.Time
	// uncertain is recent's twin for the writes of unknown outcome, whose
	// bound starts uncertainSettle later. Guarded by mu.
	uncertain []recorded
	// parked holds the keys whose reconcile was just parked, until the
	// runner's Forget that follows it (expect_backoff.go). Guarded by mu.
	parked  map[keyRef]struct{}
	holders func(kube.Written) []*cacheEntry // the caches that hold a written object
	// cachesOf is the manager's caches of a resource, read without its
	// lock (expect_readers.go); nil: none but the holders.
	cachesOf func(resKey) []*cacheEntry
	// uncertainHolders are the caches a write of unknown outcome waits on.
	uncertainHolders func(kube.Written) []*cacheEntry
	// recheck is the timer of the next re-check of the waits for writes
	// shown without an event of their object (expect_recheck.go), set
	// while one is due; checkedRV holds each cache's resourceVersion at
	// the last one; stopped: the controllers have stopped, and no re-check
	// is due any more. Guarded by mu.
	recheck   *time.Timer
	checkedRV map[*cacheEntry]string
	stopped   bool
	// serverRV reads the server's current resourceVersion of a resource
	// in a namespace (expect_uncertain.go); nil: a write of unknown
	// outcome waits for the bound.
	serverRV func(ctx context.Context, res kube.Resource, ns string) (uint64, error)
}

func newExpectations(timeout time.Duration, log *slog.Logger, mp metrics.Provider, holders func(kube.Written) []*cacheEntry) *expectations {
	return &expectations{timeout: timeout, log: log, metrics: mp, holders: holders,
		keys: map[keyRef]*keyWait{}, byObj: map[objRef]map[keyRef]struct{}{},
		objects: map[objRef]*pendingWrite{}, overdue: map[objRef]struct{}{}, parked: map[keyRef]struct{}{},
		changed: make(chan struct{})}
}

// recorded is one write in expectations.recent.
type recorded struct {
	w  *pendingWrite
	kr keyRef
	ok bool // kr is set
}

// sweepLocked forgets the writes recorded more than a bound ago, and the
// keys whose last write they were, unless a parked key's timer is about
// to deal with it. A read still waits on such a write while a cache does
// not show it (overdue).
func (e *expectations) sweepLocked(now time.Time) {
	e.recent = e.sweepListLocked(e.recent, now, e.timeout)
	e.uncertain = e.sweepListLocked(e.uncertain, now, uncertainSettle+serverRVTimeout+e.timeout)
	e.recheckOverdueLocked(now)
}

// sweepListLocked is sweepLocked on one list, whose writes are forgotten
// age after they were recorded.
func (e *expectations) sweepListLocked(recent []recorded, now time.Time, age time.Duration) []recorded {
	n := 0
	for _, r := range recent {
		if now.Sub(r.w.at) < age {
			break
		}
		n++
		if e.objects[r.w.ref] == r.w {
			if e.pruneLocked(r.w); e.objects[r.w.ref] == r.w {
				e.overdue[r.w.ref] = struct{}{}
			}
		}
		if !r.ok {
			continue
		}
		if kw := e.keys[r.kr]; kw != nil && kw.add == nil && now.Sub(kw.last) >= e.timeout {
			e.forgetLocked(r.kr, kw)
		}
	}
	clear(recent[:n]) // for the collector; the slice's head is reused when append reallocates
	return recent[n:]
}

// record notes w, made with ctx: against ctx's reconcile key if it has
// one, and as the object's latest write for reads.
func (e *expectations) record(ctx context.Context, w kube.Written) {
	if e == nil || e.timeout <= 0 {
		return
	}
	if w.Uncertain {
		e.recordUncertain(ctx, w)
		return
	}
	pw := &pendingWrite{ref: objRef{resKeyOf(w.Resource), storeKey(w.Namespace, w.Name)}, uid: w.UID,
		deleted: w.Deleted, at: time.Now()}
	if !w.Deleted {
		rv, err := strconv.ParseUint(w.ResourceVersion, 10, 64)
		if err != nil {
			return // not comparable: nothing could show it
		}
		pw.rv = rv
	} else {
		pw.delRV, _ = strconv.ParseUint(w.ResourceVersion, 10, 64)
		pw.keepRV = pw.delRV
	}
	holders := e.holders(w)
	// Read before afterUnshown looks at this process's other writes of the
	// object: one recorded during the read would be missed.
	behind, serverRV := e.statusDeleteBehind(ctx, w, holders)
	holders = e.afterUnshown(pw, holders)
	pw.leaving(w, holders)
	pw.deletedAt(holders)
	if w.Deleted && pw.uid == "" {
		// A Status answer: the uid that must go is the one cached now.
		for _, c := range holders {
			if st := c.state(pw.ref.key, false); st.uid != "" {
				pw.uid = st.uid
				break
			}
		}
	}
	pw.statusDeleteFloors(behind, serverRV, w.UID != "")
	pw.keepRV, pw.after = max(pw.keepRV, serverRV), serverRV
	for _, c := range holders {
		if !c.shows(pw) {
			pw.caches = append(pw.caches, c)
		}
	}
	if len(pw.caches) == 0 && !e.keptForReadsLocked(pw) {
		return // shown everywhere: keep e.mu free
	}
	e.add(ctx, pw, true)
}

// recordUncertain notes w, a write of unknown outcome, against ctx's
// reconcile key (expect_uncertain.go); a read does not wait for it.
func (e *expectations) recordUncertain(ctx context.Context, w kube.Written) {
	if _, ok := reconcileOf(ctx); !ok {
		return
	}
	pw := uncertainWrite(w, time.Now())
	for _, c := range e.uncertainHolders(w) {
		if !c.shows(pw) {
			pw.caches = append(pw.caches, c)
		}
	}
	if len(pw.caches) > 0 {
		e.add(ctx, pw, false)
	}
}

// add puts pw, which some caches do not show yet, in the maps: against
// ctx's reconcile key, and as its object's latest write for reads.
func (e *expectations) add(ctx context.Context, pw *pendingWrite, forReads bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sweepLocked(pw.at)
	// Shown meanwhile? A cache event applied after the check above has
	// called observed before this write was in the maps.
	pw.caches = slices.DeleteFunc(pw.caches, func(c *cacheEntry) bool { return c.shows(pw) })
	prev := e.objects[pw.ref]
	if pw.deleted && prev != nil && !prev.supersedes(pw) {
		// What prev was kept for (expect_readers.go): its version, and the
		// incarnations this process deleted before this one.
		pw.keepRV = max(pw.keepRV, prev.rv, prev.keepRV)
		pw.gone = prev.goneWith(pw.uid)
	}
	reads := forReads && (len(pw.caches) > 0 || e.keptForReadsLocked(pw))
	if len(pw.caches) == 0 && !reads {
		return
	}
	if reads && (prev == nil || !prev.supersedes(pw)) {
		e.objects[pw.ref] = pw
		delete(e.overdue, pw.ref) // pw is within its bound
	}
	kr, ok := reconcileOf(ctx)
	if pw.uncertain != nil {
		e.uncertain = append(e.uncertain, recorded{w: pw, kr: kr, ok: ok})
	} else {
		e.recent = append(e.recent, recorded{w: pw, kr: kr, ok: ok})
	}
	if !ok || len(pw.caches) == 0 {
		return
	}
	kw := e.keys[kr]
	if kw == nil {
		kw = &keyWait{}
		e.keys[kr] = kw
	}
	kw.writes = replaceWrite(kw.writes, pw)
	kw.fresh = true
	kw.last = maxTime(kw.last, pw.boundFrom())
	if e.byObj[pw.ref] == nil {
		e.byObj[pw.ref] = map[keyRef]struct{}{}
	}
	e.byObj[pw.ref][kr] = struct{}{}
}

// replaceWrite puts w in ws in place of an earlier write of its object.
func replaceWrite(ws []*pendingWrite, w *pendingWrite) []*pendingWrite {
	for i, x := range ws {
		if x.ref == w.ref {
			if !x.supersedes(w) {
				ws[i] = w
			}
			return ws
		}
	}
	return append(ws, w)
}

// storeKey is the informer's key of namespace/name.
func storeKey(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// gate wraps next so that a key waiting for its writes is parked instead
// of reconciled. (The fence's wrap, outside it, gives each reconcile's
// context its key.)
func (e *expectations) gate(ctl string, add func(Key), next Reconciler) Reconciler {
	if e == nil || e.timeout <= 0 {
		return next
	}
	return func(ctx context.Context, key Key) (Result, error) {
		kr := keyRef{ctl, key}
		e.settleUncertain(ctx, kr)
		if e.park(kr, add) {
			return Result{}, nil
		}
		return next(ctx, key)
	}
}

// park reports whether kr must wait, and if so leaves it parked: add
// queues it again when its last write shows or the bound passes.
//
// No metric or log is written under e.mu: they call the user's provider
// and handler, and the caches' goroutines wait for e.mu (observed), so
// whatever those do must not hold a change of a cache up.
func (e *expectations) park(kr keyRef, add func(Key)) bool {
	parked, report := e.parkLocking(kr, add)
	if report != nil {
		report()
	}
	return parked
}

// parkLocking is park under e.mu; it returns what to count or log once
// e.mu is released.
func (e *expectations) parkLocking(kr keyRef, add func(Key)) (parked bool, report func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	kw := e.keys[kr]
	if kw == nil {
		return false, nil
	}
	if e.settleLocked(kr, kw) {
		return false, nil
	}
	wait := time.Until(kw.last.Add(e.timeout))
	if wait <= 0 {
		return false, e.expireLocked(kr, kw)
	}
	if kw.add == nil {
		report = func() {
			e.count("kwatch_expectation_waits_total", "Reconciles held back until the caches showed the key's last writes.", kr.ctl)
		}
	}
	kw.add = add
	kw.fresh = true
	e.parked[kr] = struct{}{}
	e.armRecheckLocked()
	if kw.timer == nil {
		kw.timer = time.AfterFunc(kw.wakeLocked(wait), func() { e.expire(kr) })
	}
	return true, report
}

// wakeLocked is when a parked key's timer must fire, wait being the time
// left to its bound: at the bound, or earlier when one of its writes of
// unknown outcome is due to be read then. Expects expectations.mu held.
func (kw *keyWait) wakeLocked(wait time.Duration) time.Duration {
	if next, ok := kw.nextSettleLocked(); ok {
		return min(wait, time.Until(next))
	}
	return wait
}

// settleLocked drops kr's writes that every cache now shows and reports
// whether none is left (then kr is forgotten).
func (e *expectations) settleLocked(kr keyRef, kw *keyWait) bool {
	kept := kw.writes[:0]
	for _, w := range kw.writes {
		if e.pruneLocked(w) {
			e.unwaitLocked(w.ref, kr)
			continue
		}
		kept = append(kept, w)
	}
	kw.writes = kept
	if len(kept) > 0 {
		return false
	}
	e.forgetLocked(kr, kw)
	return true
}

// pruneLocked drops from w the caches that show it and reports whether
// none is left: then no key waits on it, and a read only while another
// cache may hold what it replaced (expect_readers.go).
func (e *expectations) pruneLocked(w *pendingWrite) bool {
	w.liftFloors()
	kept := w.caches[:0]
	for _, c := range w.caches {
		if !c.shows(w) {
			kept = append(kept, c)
		}
	}
	w.caches = kept
	if len(kept) > 0 {
		return false
	}
	if e.objects[w.ref] == w && !e.keptForReadsLocked(w) {
		delete(e.objects, w.ref)
		delete(e.overdue, w.ref)
	}
	return true
}

func (e *expectations) unwaitLocked(ref objRef, kr keyRef) {
	if ks := e.byObj[ref]; ks != nil {
		delete(ks, kr)
		if len(ks) == 0 {
			delete(e.byObj, ref)
		}
	}
}

func (e *expectations) forgetLocked(kr keyRef, kw *keyWait) {
	if kw.timer != nil {
		kw.timer.Stop()
	}
	for _, w := range kw.writes {
		e.unwaitLocked(w.ref, kr)
	}
	delete(e.keys, kr)
}

// stop ends every wait when the manager's controllers have stopped: no
// timer of a parked key fires after Manager.Run returned. The writes a
// read waits on stay: the caches stop too, so a read of an object whose
// write they did not show gets a *NotShownError, which is true.
func (e *expectations) stop() {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for kr, kw := range e.keys {
		e.forgetLocked(kr, kw)
	}
	e.stopped = true
	if e.recheck != nil {
		e.recheck.Stop()
		e.recheck = nil
	}
}

// expire ends kr's wait once the bound has passed.
func (e *expectations) expire(kr keyRef) {
	if after := e.expireLocking(kr); after != nil {
		after()
	}
}

// expireLocking is expire's part under e.mu: it returns what is left to
// do once e.mu is released (queue the key, report a timeout), or nil.
func (e *expectations) expireLocking(kr keyRef) (after func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	kw := e.keys[kr]
	if kw == nil {
		return nil
	}
	if left := time.Until(kw.last.Add(e.timeout)); kw.dueLocked(time.Now()) && left > 0 {
		// A write of unknown outcome is due to be read: the worker that
		// takes the key reads (settleUncertain), then parks it again. The
		// bound still holds if no worker does (the key moved to another
		// shard, the controller stops).
		add := kw.add
		kw.timer = time.AfterFunc(left, func() { e.expire(kr) })
		return queueKey(add, kr.key)
	}
	if add := kw.add; e.settleLocked(kr, kw) {
		// Shown without an event of the object (a bookmark passed it):
		// no observed call queued the parked key.
		return queueKey(add, kr.key)
	}
	if left := time.Until(kw.last.Add(e.timeout)); left > 0 { // a later write moved the bound
		kw.timer = time.AfterFunc(kw.wakeLocked(left), func() { e.expire(kr) })
		return nil
	}
	add := kw.add
	report := e.expireLocked(kr, kw)
	return func() {
		report()
		if add != nil {
			add(kr.key)
		}
	}
}

// queueKey returns the call that queues key with add, nil without an add.
func queueKey(add func(Key), key Key) func() {
	if add == nil {
		return nil
	}
	return func() { add(key) }
}

// expireLocked gives up on kr's writes: forgotten, and counted and
// logged by the function it returns, to be called once e.mu is released.
func (e *expectations) expireLocked(kr keyRef, kw *keyWait) (report func()) {
	unseen := make([]string, 0, len(kw.writes))
	for _, w := range kw.writes {
		unseen = append(unseen, w.String())
	}
	e.forgetLocked(kr, kw)
	return func() {
		e.count("kwatch_expectation_timeouts_total",
			"Reconciles that ran although the caches had not shown the key's last writes within the bound.", kr.ctl)
		e.log.Warn("caches did not show this key's last writes in time; reconciling anyway",
			"controller", kr.ctl, "key", kr.key.String(), "after", e.timeout, "unseen", strings.Join(unseen, "; "))
	}
}

// observed is called after a cache of res applied a change of the object
// at key (or a relist touched it): the keys waiting on it are checked.
func (e *expectations) observed(res resKey, key string) {
	ready, adds := e.observedLocking(objRef{res, key})
	for i, kr := range ready {
		adds[i](kr.key)
	}
}

// observedLocking is observed's part under e.mu: it returns the keys
// ready to be queued, and their queues' add.
func (e *expectations) observedLocking(ref objRef) (ready []keyRef, adds []func(Key)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if w := e.objects[ref]; w != nil {
		e.pruneLocked(w)
	}
	if len(e.overdue) > 0 {
		e.recheckOverdueLocked(time.Now())
	}
	// The keys waiting on the object, and on a write of unknown outcome
	// of its resource (key "").
	for _, r := range [2]objRef{ref, {ref.res, ""}} {
		for kr := range e.byObj[r] {
			kw := e.keys[kr]
			add := kw.add
			if e.settleLocked(kr, kw) && add != nil {
				ready, adds = append(ready, kr), append(adds, add)
			}
		}
	}
	if e.watched {
		close(e.changed)
		e.changed, e.watched = make(chan struct{}), false
	}
	return ready, adds
}

func (e *expectations) count(name, help, ctl string) {
	if e.metrics != nil {
		e.metrics.Counter(name, help, metrics.Label{Name: "controller", Value: ctl}).Inc()
	}
}
