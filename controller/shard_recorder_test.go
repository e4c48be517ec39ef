package controller_test

import (
	"fmt"
	"sync"
	"time"

	"github.com/kwatch/kwatch/shard"
)

// overlapRecorder is shared by every replica of a sharding test: each
// reconcile records its start and end, and a start while another
// reconcile of the same key is open, on any replica, is an overlap.
type overlapRecorder struct {
	mu       sync.Mutex
	active   map[string]string // key -> replica reconciling it now
	last     map[string]reconcileRecord
	overlaps []string
	total    int // reconciles started; the last one's seq
}

type reconcileRecord struct {
	replica string
	at      time.Time
	// seq numbers the starts (1, 2, ...): in a synctest bubble many
	// reconciles start at one instant, so an order by time is not one.
	seq int
}

func newOverlapRecorder() *overlapRecorder {
	return &overlapRecorder{active: map[string]string{}, last: map[string]reconcileRecord{}}
}

func (r *overlapRecorder) start(replica, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if other, ok := r.active[key]; ok {
		r.overlaps = append(r.overlaps, fmt.Sprintf("%s started on %s while %s reconciled it", key, replica, other))
	}
	r.active[key] = replica
	r.total++
	r.last[key] = reconcileRecord{replica: replica, at: time.Now(), seq: r.total}
}

func (r *overlapRecorder) end(replica, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active[key] == replica {
		delete(r.active, key)
	}
}

// lastOf is the last reconcile start of key.
func (r *overlapRecorder) lastOf(key string) (reconcileRecord, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.last[key]
	return rec, ok
}

func (r *overlapRecorder) overlapList() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.overlaps...)
}

func (r *overlapRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// mark is the seq of the last reconcile started so far: the reconciles
// that start later have a greater one.
func (r *overlapRecorder) mark() int { return r.count() }

// reconciledAfter reports whether each key's last reconcile started
// after mark, on its owner under ring.
func (r *overlapRecorder) reconciledAfter(ring *shard.Ring, keys []string, mark int) bool {
	for _, k := range keys {
		last, ok := r.lastOf(k)
		if !ok || last.seq <= mark || last.replica != ring.Owner(k) {
			return false
		}
	}
	return true
}
