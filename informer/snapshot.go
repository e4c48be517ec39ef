package informer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"time"

	"github.com/kwatch/kwatch/internal/snapfile"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// SnapshotOptions make a compact informer keep its store in a file, so
// that a restarted process resumes its watch instead of listing again.
//
// On Run the informer loads the file, if there is one, and resumes:
//   - It checks that the file is a good snapshot of this informer: format,
//     checksum, and the same cluster (the host, the kube-system
//     namespace's UID, and Cluster; see snapidentity.go for when the UID
//     cannot be read), resource, namespace, selectors and encoding. A file that is missing is silent; one that is corrupt,
//     truncated or another informer's is logged and ignored, and the
//     informer lists as without one. So is a file another local user could
//     have planted or changed: a symbolic link (never followed), or on
//     Unix a file not owned by the process's user or writable by its
//     group or others.
//   - The loaded objects are the store, and handlers get them as adds in
//     the initial list. Then the informer asks the server whether it has
//     reached the snapshot's resourceVersion (a server restored to an older
//     state has not) and watches from it. A 410 (the snapshot is older than
//     the server's history) or a server behind the snapshot makes it list,
//     as after any 410: objects deleted meanwhile are delivered as deletes
//     with finalStateUnknown, changed ones as updates, and new ones as adds
//     with inInitialList set (that list is what syncs the informer).
//   - It counts as synced (HasSynced, WaitForSync, handlers' HasSynced) once
//     its store has reached the resourceVersion the server reported when it
//     confirmed the snapshot's: the same promise as a fresh list, that the
//     store holds the server's state as of a moment after Run started. The
//     watch brings it there with the events since the snapshot, or with a
//     bookmark (a quiet resource waits for the server's next bookmark,
//     about a minute on a real server). A list, if one is needed, syncs it
//     as usual.
//
// While running, it writes the store and its resourceVersion to the file
// at most every Interval, when they changed and the informer is synced, in
// the background and paced at BytesPerSecond, and once more, unpaced, when
// Run returns. Each write replaces the file atomically. The file holds
// every object as the server sent it (Secrets too): it is created with mode
// 0600, and its directory should be as private as the credentials.
type SnapshotOptions struct {
	// Path is the file. Required.
	Path string
	// Interval is the least time between two writes; 1 minute.
	Interval time.Duration
	// BytesPerSecond paces the background writes; 0 leaves them unpaced.
	BytesPerSecond int
	// Cluster names the cluster in the file's server identity, beside the
	// client's host and the UID of the cluster's kube-system namespace
	// (read once per Run). When that UID cannot be read (no RBAC to get
	// namespaces/kube-system, or a server without it), Cluster and the host
	// are the whole identity: the user's word for which cluster is behind
	// the address. "": without the UID, snapshots are off (logged).
	Cluster string
	// MaxFileSize bounds the file a load accepts; 4 GiB.
	MaxFileSize int64
}

// DefaultSnapshotInterval is SnapshotOptions.Interval's default.
const DefaultSnapshotInterval = time.Minute

// snapshotter keeps a Raw informer's snapshot file.
type snapshotter struct {
	inf  *Informer[*watch.Raw]
	opts SnapshotOptions
	// encoding names how the records' objects are encoded, so a file
	// written by a differently configured informer is not loaded.
	encoding string
	// server is the cluster's identity in this Run's snapshots
	// (snapidentity.go), set by restore before the writer starts; "" when
	// the cluster could not be named: then nothing is loaded or written.
	server string
	lastRV string // the RV of the last write or load; only the writer goroutine and Run's end touch it
}

func newSnapshotter(inf *Informer[*watch.Raw], opts SnapshotOptions, encoding string) (*snapshotter, error) {
	if opts.Path == "" {
		return nil, errors.New("informer: SnapshotOptions.Path is empty")
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultSnapshotInterval
	}
	if opts.BytesPerSecond < 0 {
		return nil, fmt.Errorf("informer: SnapshotOptions.BytesPerSecond is negative (%d)", opts.BytesPerSecond)
	}
	return &snapshotter{inf: inf, opts: opts, encoding: encoding}, nil
}

// header is the identity of this informer's snapshots.
func (s *snapshotter) header() snapfile.Header {
	o := &s.inf.opts
	return snapfile.Header{Group: o.Resource.Group, Version: o.Resource.Version, Resource: o.Resource.Resource,
		Namespace: o.Scope.Namespace, LabelSelector: o.Scope.LabelSelector, FieldSelector: o.Scope.FieldSelector,
		Server: s.server, Encoding: s.encoding}
}

// restore names the cluster, then loads the file into the store and
// returns the state to start from; ok is false when there was nothing
// good to load.
func (s *snapshotter) restore(ctx context.Context) (st state, ok bool) {
	inf := s.inf
	log := inf.opts.Logger.With("resource", inf.opts.Resource.String(), "snapshot", s.opts.Path)
	id, err := s.identify(ctx)
	if err != nil {
		if ctx.Err() == nil {
			log.Warn("informer cannot name the cluster, so it neither loads nor writes its snapshot in this run: "+
				"grant it get on namespaces/kube-system, or set SnapshotOptions.Cluster", "err", err)
		}
		return st, false
	}
	s.server = id
	r, err := snapfile.Open(s.opts.Path, snapfile.ReadOptions{MaxFileSize: s.opts.MaxFileSize})
	if errors.Is(err, fs.ErrNotExist) {
		return st, false
	}
	if err == nil {
		defer r.Close()
		err = snapfile.Check(r.Header(), s.header())
	}
	if err != nil {
		log.Warn("informer ignores its snapshot and lists", "err", err)
		return st, false
	}
	h := r.Header()
	repl, err := stageRecords(r, inf.store)
	if err != nil {
		log.Warn("informer ignores its snapshot and lists", "err", err)
		return st, false
	}
	inf.restoreCommit(repl, h.ResourceVersion)
	s.lastRV = h.ResourceVersion
	log.Info("informer restored its store from a snapshot", "objects", h.Count, "rv", h.ResourceVersion,
		"written", h.Created)
	return restoredState(inf.opts.ListMode, h.ResourceVersion), true
}

// stageRecords reads every record of r into a replacement of st, sized for
// them, and verifies the file; the caller commits it only when the error
// is nil.
func stageRecords(r *snapfile.Reader, st *store.Store[*watch.Raw]) (*store.Replacement[*watch.Raw], error) {
	repl := st.NewReplacementSized(sizeHint(r.Header().Count, r.Size()))
	err := r.Records(func(rec snapfile.Record) error {
		raw, err := watch.ParseRecord(rec.Data) // keeps rec.Data, which the reader never reuses
		if err != nil {
			return fmt.Errorf("object %q: %w", rec.Key, err)
		}
		// The store keys it again: the file's key is only for the error.
		if err := repl.Add(raw); err != nil {
			return fmt.Errorf("object %q: %w", rec.Key, err)
		}
		return nil
	})
	return repl, err
}

// sizeHint is the number of objects a snapshot's store is sized for: its
// header's count, but no more than its file's size could hold at
// minRecordSize bytes a record, so that a damaged count cannot make a large
// map of a small file.
func sizeHint(count uint64, fileSize int64) int {
	return int(min(count, uint64(max(fileSize, 0))/minRecordSize))
}

// minRecordSize is a lower bound on the bytes of a record of a real object
// (key, lengths and an object with a name and resourceVersion).
const minRecordSize = 32

// run writes the snapshot every Interval until ctx ends.
func (s *snapshotter) run(ctx context.Context) {
	t := time.NewTicker(s.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.write(ctx, s.opts.BytesPerSecond)
		}
	}
}

// final writes the snapshot once Run's loop has ended, unpaced, bounded by
// finalSnapshotTimeout.
func (s *snapshotter) final() {
	ctx, cancel := context.WithTimeout(context.Background(), finalSnapshotTimeout)
	defer cancel()
	s.write(ctx, 0)
}

// finalSnapshotTimeout bounds the write at the end of Run.
const finalSnapshotTimeout = 2 * time.Minute

// write writes the store when it is synced and changed since the last write.
func (s *snapshotter) write(ctx context.Context, rate int) {
	inf := s.inf
	if s.server == "" || !inf.synced.Load() {
		return
	}
	items, rv := inf.store.SnapshotAt()
	if rv == "" || rv == s.lastRV {
		return
	}
	h := s.header()
	h.ResourceVersion, h.Count = rv, uint64(len(items))
	records := func(yield func(snapfile.Record, error) bool) {
		var buf []byte
		for k, raw := range items {
			buf = raw.AppendRecord(buf[:0])
			if !yield(snapfile.Record{Key: k, Data: buf}, nil) {
				return
			}
		}
	}
	err := snapfile.Write(ctx, s.opts.Path, h, iter.Seq2[snapfile.Record, error](records), snapfile.WriteOptions{BytesPerSecond: rate})
	if err != nil {
		if ctx.Err() == nil {
			inf.opts.Logger.Error("informer could not write its snapshot", "resource", inf.opts.Resource.String(),
				"snapshot", s.opts.Path, "err", err)
		}
		return
	}
	s.lastRV = rv
	inf.stats.snapshots.Add(1)
}

// restoreCommit makes repl the store at rv and gives handlers its objects
// as the initial list, without marking the informer synced; OnApplied
// then hears of every key.
func (inf *Informer[T]) restoreCommit(repl *store.Replacement[T], rv string) {
	applied := func() []string {
		inf.distMu.Lock()
		defer inf.distMu.Unlock()
		return inf.restoreCommitLocked(repl, rv)
	}()
	inf.logHeld()
	inf.tellApplied(applied...)
}

// restoreCommitLocked is restoreCommit under distMu; it returns the keys
// restored when there is an OnApplied to tell.
func (inf *Informer[T]) restoreCommitLocked(repl *store.Replacement[T], rv string) []string {
	inf.store.Commit(repl, rv)
	inf.filled = true
	inf.stats.touch(rv)
	if len(inf.handlers) == 0 && inf.opts.OnApplied == nil {
		return nil
	}
	keys, objs := inf.store.Items()
	for _, r := range inf.handlers {
		r.q.addAll(keys, objs, true)
	}
	if inf.opts.OnApplied == nil {
		return nil
	}
	return keys
}
