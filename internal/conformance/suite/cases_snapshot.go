package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// snapshotCases restart compact informers from their snapshot files. Each
// runs two or three informers side by side, one per snapshot file: the
// suite's slim pods (JSON on both servers) and k8s.io/api pods (protobuf on
// the real server, so that its snapshot holds protobuf messages).
func snapshotCases() []Case {
	return []Case{
		{Name: "informer-compact/snapshot-restart-resumes-watch", Run: testSnapshotRestart},
		{Name: "informer-compact/snapshot-older-than-history", Run: testSnapshotOlderThanHistory},
		{Name: "informer-compact/snapshot-taken-before-deletes", Run: testSnapshotBeforeDeletes},
		{Name: "informer-compact/snapshot-from-another-cluster", Run: testSnapshotFromAnotherCluster},
	}
}

// snapWatchTimeout is the snapshot informers' MinWatchTimeout. A restored
// informer is synced once its store reaches the RV the server reported
// when it confirmed the snapshot's, which takes a bookmark when the
// namespace is quiet; both servers send one shortly before a watch's
// timeoutSeconds, so a short timeout makes the wait short (the default
// would wait for the real server's minutely bookmark).
const snapWatchTimeout = 5 * time.Second

// snapSubject is one informer configuration a snapshot case stops and
// starts again on one snapshot file, whatever its object type.
type snapSubject interface {
	label() string
	path() string
	// start runs a new informer on the file with a fresh Ordered call log
	// and waits for it to sync; stop stops it and waits for Run to return.
	start(t T, e *Env)
	stop()
	// withPath is the same configuration on another file.
	withPath(path string) snapSubject
	stats() informer.Stats
	resourceVersion() string
	views() map[string]func() map[string]string // store, raw store, handler
	calls() []handlerCall
	// requireSame checks the store equals the server field for field, the
	// raw store keeps the encoding it should, every object decoded, and
	// the handler's calls never contradicted each other.
	requireSame(t T, e *Env)
}

type snapInformer[O watch.Object] struct {
	name   string
	opts   informer.Options[O]
	lister *kube.Client // lists the server in the informer's encoding
	proto  bool         // O asks for protobuf
	inf    *informer.Informer[O]
	log    *callLog[O]
	stopFn func()
}

// newSnapSubject is an informer of O through c keeping its compact store
// in dir/<name>.snap.
func newSnapSubject[O watch.Object](dir, name string, c *kube.Client, proto bool) snapSubject {
	return &snapInformer[O]{name: name, lister: c, proto: proto, opts: informer.Options[O]{
		Client: c,
		// Writes while running too, paced, besides the one when Run returns.
		Snapshot: &informer.SnapshotOptions{Path: filepath.Join(dir, name+".snap"), Interval: time.Second, BytesPerSecond: 1 << 20},
		Tuning:   informer.Tuning{Store: informer.StoreCompact, MinWatchTimeout: snapWatchTimeout},
	}}
}

func (s *snapInformer[O]) label() string { return s.name }
func (s *snapInformer[O]) path() string  { return s.opts.Snapshot.Path }

func (s *snapInformer[O]) start(t T, e *Env) {
	t.Helper()
	s.log = &callLog[O]{}
	s.inf, s.stopFn = startInformer(t, e, s.opts, informer.Handler[O](s.log))
}

func (s *snapInformer[O]) stop() { s.stopFn() }

func (s *snapInformer[O]) withPath(path string) snapSubject {
	c := *s
	snap := *s.opts.Snapshot
	snap.Path = path
	c.opts.Snapshot, c.inf, c.log, c.stopFn = &snap, nil, nil, nil
	return &c
}

func (s *snapInformer[O]) stats() informer.Stats   { return s.inf.Stats() }
func (s *snapInformer[O]) resourceVersion() string { return s.inf.Health().ResourceVersion }
func (s *snapInformer[O]) calls() []handlerCall    { return s.log.get() }
func (s *snapInformer[O]) views() map[string]func() map[string]string {
	v := storeViews(s.name, s.inf, storeModes[1])
	v[s.name+" handler"] = s.log.view
	return v
}

func (s *snapInformer[O]) requireSame(t T, e *Env) {
	t.Helper()
	requireSameObjects(t, e, s.lister, watch.ListOptions{Limit: 100}, s.name, s.inf)
	requireCompactHealthy(t, s.name, s.inf, storeModes[1])
	if len(s.inf.RawStore().ListKeys()) > 0 {
		requireRawEncoding(t, e, s.name, s.inf, s.proto)
	}
	_, bad := s.log.replay()
	require.Empty(t, bad, "%s: handler calls that contradict the ones before", s.name)
}

// slimAndProtoSubjects are the two informers most snapshot cases restart,
// both on the server of cfg: slim pods and k8s.io/api pods.
func slimAndProtoSubjects(t T, dir, prefix string, cfg func() *kube.Config) []snapSubject {
	pc, _ := protoClient(t, cfg())
	return []snapSubject{
		newSnapSubject[*Pod](dir, prefix+"slim", newClient(t, cfg()), false),
		newSnapSubject[*corev1.Pod](dir, prefix+"protobuf", pc, true),
	}
}

// snapshotDir is a private directory for the case's snapshot files.
func snapshotDir(t T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kwatch-conformance-snap-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// runFresh starts each subject without a snapshot file, lets it sync and
// stops it, which writes its file.
func runFresh(t T, e *Env, subjects []snapSubject) {
	t.Helper()
	for _, s := range subjects {
		_, err := os.Stat(s.path())
		require.ErrorIs(t, err, os.ErrNotExist, "%s: a snapshot before the first run", s.label())
		s.start(t, e)
		require.False(t, s.stats().Restored, "%s restored from no file", s.label())
	}
	stopAll(t, subjects)
}

// stopAll stops every subject and checks each wrote its file.
func stopAll(t T, subjects []snapSubject) {
	t.Helper()
	for _, s := range subjects {
		s.stop()
		require.Positive(t, s.stats().SnapshotWrites, "%s wrote no snapshot", s.label())
		fi, err := os.Stat(s.path())
		require.NoError(t, err, "%s: snapshot file", s.label())
		require.Positive(t, fi.Size(), "%s: empty snapshot file", s.label())
	}
}

// restartAll starts every subject on its file; each must have loaded it.
func restartAll(t T, e *Env, subjects []snapSubject) {
	t.Helper()
	for _, s := range subjects {
		s.start(t, e)
		require.True(t, s.stats().Restored, "%s did not load its snapshot (stats %+v)", s.label(), s.stats())
	}
}

// logSubjects logs what each subject's current informer did.
func logSubjects(t T, when string, subjects []snapSubject) {
	t.Helper()
	for _, s := range subjects {
		st := s.stats()
		t.Logf("%s: %s: restored %v, lists %d, 410s %d, confirms %d, watches %d, events %d, decodes %d, snapshot writes %d, handler calls %d",
			when, s.label(), st.Restored, st.Relists, st.Gone, st.Confirms, st.Watches, st.Events, st.Decodes, st.SnapshotWrites, len(s.calls()))
	}
}

// requireResumedWithoutList: a restored informer that watched on from its
// snapshot's RV and never listed.
func requireResumedWithoutList(t T, s snapSubject) {
	t.Helper()
	st := s.stats()
	require.Zero(t, st.Relists, "%s listed: the watch should have resumed from the snapshot (stats %+v)", s.label(), st)
	require.Zero(t, st.Gone, "%s met a 410 (stats %+v)", s.label(), st)
}

// convergeAll waits until every subject's store, raw store and handler
// replay hold the server's state, then checks the objects field for field.
func convergeAll(t T, e *Env, subjects []snapSubject) {
	t.Helper()
	var views []map[string]func() map[string]string
	for _, s := range subjects {
		views = append(views, s.views())
	}
	requireConverges(t, e, mergeViews(views...))
	for _, s := range subjects {
		s.requireSame(t, e)
	}
}

// deleteMode says how the deletes a restarted informer delivers must be
// flagged.
type deleteMode int

const (
	deletesWatched deleteMode = iota // seen on the watch: finalStateUnknown false
	deletesListed                    // inferred from a relist: finalStateUnknown true
	deletesEither
)

// delivered is what a restarted informer's handler must have been given:
// the snapshot's objects as the initial list, then the changes made since.
type delivered struct {
	initial                   int
	updated, deleted, created []string
	deletes                   deleteMode
}

// requireDelivered checks s's call log against want: first want.initial
// adds in the initial list, then for each name an update, a delete
// (flagged as want.deletes says) or an add. An informer that resumed its
// watch gives the adds outside the initial list; one that had to list
// (Stats.Relists) synced with that list, so its adds are in the initial
// list as well (inInitialList: delivered before the informer synced).
func requireDelivered(t T, s snapSubject, want delivered) {
	t.Helper()
	calls := s.calls()
	require.GreaterOrEqual(t, len(calls), want.initial, "%s: %d calls", s.label(), len(calls))
	for i, c := range calls[:want.initial] {
		require.True(t, c.op == "add" && c.flag, "%s: call %d is %+v, want an add of the snapshot's initial list", s.label(), i, c)
	}
	later := calls[want.initial:]
	if s.stats().Relists == 0 {
		for _, c := range later {
			require.False(t, c.op == "add" && c.flag, "%s: %+v in the initial list after the snapshot's %d objects", s.label(), c, want.initial)
		}
	}
	find := func(op, name string) (handlerCall, bool) {
		for _, c := range later {
			if c.op == op && c.name == name {
				return c, true
			}
		}
		return handlerCall{}, false
	}
	for _, n := range want.updated {
		_, ok := find("update", n)
		require.True(t, ok, "%s: no update of %s among %s", s.label(), n, describeCalls(later))
	}
	for _, n := range want.created {
		_, ok := find("add", n)
		require.True(t, ok, "%s: no add of %s among %s", s.label(), n, describeCalls(later))
	}
	for _, n := range want.deleted {
		c, ok := find("delete", n)
		require.True(t, ok, "%s: no delete of %s among %s", s.label(), n, describeCalls(later))
		switch want.deletes {
		case deletesWatched:
			require.False(t, c.flag, "%s: delete of %s flagged finalStateUnknown, but the watch saw it (stats %+v, calls %s)",
				s.label(), n, s.stats(), describeCalls(later))
		case deletesListed:
			require.True(t, c.flag, "%s: delete of %s not flagged finalStateUnknown, but it came from a relist (stats %+v, calls %s)",
				s.label(), n, s.stats(), describeCalls(later))
		}
	}
}

func describeCalls(cs []handlerCall) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s %s@%s/%v", c.op, c.name, c.rv, c.flag))
	}
	if len(parts) > 40 {
		parts = append(parts[:40], fmt.Sprintf("... (%d)", len(cs)))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// labelPods sets key=value on each name, writers at a time.
func labelPods(t T, e *Env, names []string, key, value string) {
	t.Helper()
	forEach(t, len(names), func(i int) error {
		_, err := e.Kube.LabelPod(e.Ctx, e.NS, names[i], key, value)
		return err
	})
}

func deletePods(t T, e *Env, names []string) {
	t.Helper()
	forEach(t, len(names), func(i int) error { return e.Kube.DeletePod(e.Ctx, e.NS, names[i]) })
}

// testSnapshotRestart: informers stopped and started again on their
// snapshot files, twice, resume their watches without listing and end
// with the server's state, the updates, deletes and creates made while
// they were stopped delivered as watched changes after the snapshot's
// objects. The second restart loads the file a restored informer wrote.
func testSnapshotRestart(t T, e *Env) {
	subjects := slimAndProtoSubjects(t, snapshotDir(t), "", func() *kube.Config { return e.Target.Config(Admin) })
	names := podNames("sr", 60)
	createPods(t, e, names, map3("round", "one"))
	runFresh(t, e, subjects)

	// While stopped: updates, deletes, creates.
	labelPods(t, e, names[:10], "round", "two")
	deletePods(t, e, names[10:20])
	created := podNames("sr-new", 10)
	createPods(t, e, created, nil)

	restartAll(t, e, subjects)
	convergeAll(t, e, subjects)
	for _, s := range subjects {
		requireResumedWithoutList(t, s)
		requireDelivered(t, s, delivered{initial: 60, updated: names[:10], deleted: names[10:20], created: created})
	}
	logSubjects(t, "first restart", subjects)

	// While running, then while stopped again.
	labelPods(t, e, names[20:25], "round", "three")
	convergeAll(t, e, subjects)
	stopAll(t, subjects)
	deletePods(t, e, names[25:30])
	labelPods(t, e, created[:5], "round", "three")
	again := podNames("sr-again", 5)
	createPods(t, e, again, nil)

	restartAll(t, e, subjects)
	convergeAll(t, e, subjects)
	for _, s := range subjects {
		requireResumedWithoutList(t, s)
		requireDelivered(t, s, delivered{initial: 60, updated: created[:5], deleted: names[25:30], created: again})
	}
	logSubjects(t, "second restart", subjects)
	require.Len(t, serverState(t, e), 60)
}

// testSnapshotOlderThanHistory: a snapshot whose RV the server compacted
// while the informers were stopped. On the storage-backed server (watches
// read etcd) the resumed watch must get a 410: the informer lists, and the
// objects deleted meanwhile come as deletes with finalStateUnknown. On the
// server with the watch cache an old RV may still be replayed from the
// cache's history, so either may happen there: a replay delivers the
// deletes as watched, a 410 as listed. Every store ends as the server.
func testSnapshotOlderThanHistory(t T, e *Env) {
	dir := snapshotDir(t)
	storage := slimAndProtoSubjects(t, dir, "storage-", e.Target.StorageConfig)
	cc, _ := protoClient(t, e.Target.Config(Admin))
	cached := newSnapSubject[*corev1.Pod](dir, "cached-protobuf", cc, true)
	subjects := append(slices.Clone(storage), cached)

	names := podNames("so", 40)
	createPods(t, e, names, nil)
	runFresh(t, e, subjects)
	var rvs []string
	for _, s := range subjects {
		rvs = append(rvs, s.resourceVersion())
	}

	deletePods(t, e, names[:10])
	labelPods(t, e, names[10:20], "while", "stopped")
	created := podNames("so-new", 10)
	createPods(t, e, created, nil)
	require.NoError(t, e.Target.Expire(e.Ctx, maxRV(t, rvs)))

	restartAll(t, e, subjects)
	convergeAll(t, e, subjects)
	want := delivered{initial: 40, updated: names[10:20], deleted: names[:10], created: created}
	for _, s := range storage {
		st := s.stats()
		require.Positive(t, st.Gone, "%s: no 410 from a compacted snapshot RV (stats %+v)", s.label(), st)
		require.Positive(t, st.Relists, "%s: no list after the 410 (stats %+v)", s.label(), st)
		want.deletes = deletesListed
		requireDelivered(t, s, want)
	}
	st := cached.stats()
	want.deletes = deletesWatched
	if st.Gone > 0 || st.Relists > 0 {
		want.deletes = deletesEither
	}
	requireDelivered(t, cached, want)
	logSubjects(t, "restart from a compacted RV", subjects)
	t.Logf("the cached server: %d 410s, %d lists after the restart from a compacted RV", st.Gone, st.Relists)
}

// testSnapshotBeforeDeletes: an informer restarted from a snapshot taken
// before every pod it held was deleted (and some recreated under the same
// names, with new uids) while a later informer watched (a process that died
// after that write) resumes from the old file without listing and ends
// empty of the deleted pods, the recreated ones in their new incarnations.
func testSnapshotBeforeDeletes(t T, e *Env) {
	dir := snapshotDir(t)
	subjects := slimAndProtoSubjects(t, dir, "", func() *kube.Config { return e.Target.Config(Admin) })
	names := podNames("sd", 40)
	createPods(t, e, names, nil)
	runFresh(t, e, subjects)

	// Keep the files as they are now: the crash image.
	var old []snapSubject
	for _, s := range subjects {
		b, err := os.ReadFile(s.path())
		require.NoError(t, err)
		p := filepath.Join(dir, "old-"+filepath.Base(s.path()))
		require.NoError(t, os.WriteFile(p, b, 0o600))
		old = append(old, s.withPath(p))
	}

	// The next run sees the deletes and writes its own file.
	restartAll(t, e, subjects)
	deletePods(t, e, names)
	recreated := names[:5]
	createPods(t, e, recreated, map3("incarnation", "two"))
	convergeAll(t, e, subjects)
	for _, s := range subjects {
		requireResumedWithoutList(t, s)
		requireDelivered(t, s, delivered{initial: 40, deleted: names, created: recreated})
	}
	logSubjects(t, "the run that saw the deletes", subjects)
	stopAll(t, subjects)

	// The old file: its 40 pods, all deleted since.
	restartAll(t, e, old)
	convergeAll(t, e, old)
	for _, s := range old {
		requireResumedWithoutList(t, s)
		requireDelivered(t, s, delivered{initial: 40, deleted: names, created: recreated})
	}
	logSubjects(t, "restart from the file before the deletes", old)
	require.Len(t, serverState(t, e), len(recreated))
}
