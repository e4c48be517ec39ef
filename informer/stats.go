package informer

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// stats are the informer's counters, updated without locks on the hot path.
type stats struct {
	events          atomic.Int64
	relists         atomic.Int64
	watches         atomic.Int64
	idleTimeouts    atomic.Int64
	gone            atomic.Int64
	errorsTotal     atomic.Int64
	transformErrors atomic.Int64
	storeErrors     atomic.Int64
	confirms        atomic.Int64
	snapshots       atomic.Int64
	restored        atomic.Bool
	connected       atomic.Bool
	lastActivity    atomic.Int64 // unix nanos of the last event, bookmark or commit
	listed          atomic.Int64 // objects received by the list in progress (or the last one)
	appliedPanics   atomic.Int64 // OnApplied calls that panicked

	lastRV atomic.Pointer[string] // the last RV seen; nil before any

	mu            sync.Mutex
	lastErr       error // nil once a later list or watch succeeded
	lastErrAt     time.Time
	lastRefusal   error // the last object refused; kept
	lastRefusalAt time.Time
}

// refusal records why the informer refused to cache an object.
func (s *stats) refused(err error) {
	s.mu.Lock()
	s.lastRefusal, s.lastRefusalAt = err, time.Now()
	s.mu.Unlock()
}

func (s *stats) touch(rv string) {
	s.lastActivity.Store(time.Now().UnixNano())
	if rv != "" {
		s.lastRV.Store(&rv)
	}
}

func (s *stats) recordErr(err error) {
	if err == nil || errors.Is(err, io.EOF) {
		return
	}
	switch {
	case errors.Is(err, watch.ErrIdleTimeout):
		s.idleTimeouts.Add(1)
	case kube.IsGone(err):
		s.gone.Add(1)
	default:
		s.errorsTotal.Add(1)
	}
	s.mu.Lock()
	s.lastErr, s.lastErrAt = err, time.Now()
	s.mu.Unlock()
}

// recovered clears the last error: a list committed or a watch opened.
func (s *stats) recovered() {
	s.mu.Lock()
	s.lastErr = nil
	s.mu.Unlock()
}

// Stats are an informer's counters since it was built.
type Stats struct {
	Events          int64 // watch events applied, bookmarks included
	Relists         int64 // lists committed to the store, the first included
	Watches         int64 // watch requests opened
	IdleTimeouts    int64 // watches ended by the idle deadline
	Gone            int64 // 410 answers
	Errors          int64 // other failed phases
	TransformErrors int64 // objects Transform refused; they are not cached
	StoreErrors     int64 // objects the store refused (key or index errors); they are not cached
	// Confirms counts the checks that the server has reached the
	// informer's resourceVersion, made before resuming a watch that ended
	// early (see Health.ResourceVersion).
	Confirms       int64
	HandlerBacklog int   // pending changes summed over handlers (see Registration.Backlog)
	HandlerPanics  int64 // handler calls that panicked, OnApplied's included
	// HandlerMerged counts changes merged away before a handler saw them,
	// summed over handlers (see Registration.Merged).
	HandlerMerged int64
	// Listed counts the objects received so far by the list in progress
	// (or by the last list): progress for a large initial sync.
	Listed int64
	// Decodes counts the objects a compact store decoded for its readers
	// and handlers (cache hits excluded), DecodeErrors those that did not
	// decode; both 0 in StoreTyped.
	Decodes      int64
	DecodeErrors int64
	// SnapshotWrites counts the snapshot files written; Restored is true
	// when Run loaded the store from one (see SnapshotOptions).
	SnapshotWrites int64
	Restored       bool
}

// Stats returns the informer's counters.
func (inf *Informer[T]) Stats() Stats {
	if inf.compact != nil {
		return inf.compact.stats()
	}
	s := Stats{
		Events: inf.stats.events.Load(), Relists: inf.stats.relists.Load(), Watches: inf.stats.watches.Load(),
		IdleTimeouts: inf.stats.idleTimeouts.Load(), Gone: inf.stats.gone.Load(), Errors: inf.stats.errorsTotal.Load(),
		TransformErrors: inf.stats.transformErrors.Load(), StoreErrors: inf.stats.storeErrors.Load(),
		Confirms: inf.stats.confirms.Load(), Listed: inf.stats.listed.Load(),
		SnapshotWrites: inf.stats.snapshots.Load(), Restored: inf.stats.restored.Load(),
		HandlerPanics: inf.stats.appliedPanics.Load(),
	}
	inf.distMu.Lock()
	for _, r := range inf.handlers {
		s.HandlerBacklog += r.Backlog()
		c := r.q.counts()
		s.HandlerPanics += c.panics
		s.HandlerMerged += int64(c.merged)
	}
	inf.distMu.Unlock()
	return s
}

// Health is what a readiness probe needs to know.
type Health struct {
	Synced bool
	// Watching is true while a watch stream is open.
	Watching bool
	// LastActivity is when the last event, bookmark or list arrived; zero
	// before any. With bookmarks on, a healthy watch moves it at least
	// about once a minute even on a quiet resource.
	LastActivity    time.Time
	ResourceVersion string
	// LastError is the last failure, until a later list commits or a watch
	// opens; LastErrorTime says when it happened (kept after recovery).
	LastError     error
	LastErrorTime time.Time
	// LastRefusal is why the informer last refused to cache an object
	// (Transform failed, or the store could not key or index it), and
	// LastRefusalTime when; zero if it never did. A refused object is
	// absent from the store, never present in an older version.
	LastRefusal     error
	LastRefusalTime time.Time
}

// Health returns the informer's current health.
func (inf *Informer[T]) Health() Health {
	if inf.compact != nil {
		return inf.compact.raw.Health()
	}
	h := Health{Synced: inf.HasSynced(), Watching: inf.stats.connected.Load()}
	if ns := inf.stats.lastActivity.Load(); ns != 0 {
		h.LastActivity = time.Unix(0, ns)
	}
	inf.stats.mu.Lock()
	if rv := inf.stats.lastRV.Load(); rv != nil {
		h.ResourceVersion = *rv
	}
	h.LastError, h.LastErrorTime = inf.stats.lastErr, inf.stats.lastErrAt
	h.LastRefusal, h.LastRefusalTime = inf.stats.lastRefusal, inf.stats.lastRefusalAt
	inf.stats.mu.Unlock()
	return h
}
