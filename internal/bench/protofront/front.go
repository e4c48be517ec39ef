// Package protofront serves pods in the API server's protobuf encoding, for
// the benchmark's client-go protobuf row. The simulated API server speaks
// JSON only; this front holds its own copy of the pods (loaded once from the
// simulator's JSON), takes the benchmark's writes itself and encodes each
// written pod once, so that serving a list or a watch is copying bytes.
//
// It implements just what an informer uses: list (limit and continue when
// resourceVersion is not "0"), watch from a resourceVersion with the 410
// ERROR event when it is too old, and streaming lists (sendInitialEvents)
// ended by the initial-events-end bookmark. Continue tokens page over the
// current state, not a snapshot: the benchmark never writes during a list.
package protofront

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
)

// Front is the protobuf pod server. The zero value is not usable; build one
// with New. Its methods are safe for concurrent use.
type Front struct {
	mu      sync.Mutex
	rv      uint64            // newest resourceVersion; guarded by mu
	keys    []string          // sorted "namespace/name", the list order; guarded by mu
	pods    map[string][]byte // key -> Pod message (no envelope); guarded by mu
	hist    ring              // recent events; guarded by mu
	floor   uint64            // a watch from an RV below it gets 410; guarded by mu
	notify  chan struct{}     // closed and replaced on every write; guarded by mu
	restart chan struct{}     // closed and replaced by DropWatches; guarded by mu

	watchers atomic.Int64
}

// New returns an empty front that keeps the last historySize events for
// watches; a watcher that falls further behind is ended, as the real
// server ends one whose buffer fills.
func New(historySize int) *Front {
	return &Front{pods: map[string][]byte{}, hist: newRing(historySize),
		notify: make(chan struct{}), restart: make(chan struct{})}
}

// Load replaces the front's state with pods given as JSON (keyed
// "namespace/name") at resourceVersion rv, and forgets the history.
func (f *Front) Load(rv uint64, objs map[string][]byte) error {
	pods := make(map[string][]byte, len(objs))
	for k, raw := range objs {
		var p corev1.Pod
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("protofront: decode %s: %w", k, err)
		}
		msg, err := p.Marshal()
		if err != nil {
			return fmt.Errorf("protofront: encode %s: %w", k, err)
		}
		pods[k] = msg
	}
	keys := slices.Sorted(mapKeys(pods))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rv, f.keys, f.pods, f.floor = rv, keys, pods, rv
	f.hist.clear(rv)
	f.signalLocked()
	return nil
}

func mapKeys(m map[string][]byte) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Update applies mutate to a copy of the pod at key, stores it at the next
// resourceVersion and records a MODIFIED event. It returns that version.
func (f *Front) Update(key string, mutate func(*corev1.Pod)) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	msg, ok := f.pods[key]
	if !ok {
		return 0, fmt.Errorf("protofront: no pod %s", key)
	}
	var p corev1.Pod
	if err := p.Unmarshal(msg); err != nil {
		return 0, fmt.Errorf("protofront: decode %s: %w", key, err)
	}
	mutate(&p)
	rv := f.rv + 1
	p.ResourceVersion = strconv.FormatUint(rv, 10)
	msg, err := p.Marshal()
	if err != nil {
		return 0, fmt.Errorf("protofront: encode %s: %w", key, err)
	}
	f.rv, f.pods[key] = rv, msg
	if ev := f.hist.push(event{rv: rv, frame: appendFrame(nil, "MODIFIED", "Pod", msg)}); ev > f.floor {
		f.floor = ev
	}
	f.signalLocked()
	return rv, nil
}

func (f *Front) signalLocked() {
	close(f.notify)
	f.notify = make(chan struct{})
}

// DropWatches ends every open watch, like a server restart. With
// loseHistory the history goes too: resuming from any RV older than the
// newest gets 410, so every watcher must relist.
func (f *Front) DropWatches(loseHistory bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.restart)
	f.restart = make(chan struct{})
	if loseHistory {
		f.hist.clear(f.rv)
		f.floor = f.rv
	}
}

// ActiveWatches is the number of open watch streams.
func (f *Front) ActiveWatches() int64 { return f.watchers.Load() }

// ResourceVersion is the newest resourceVersion.
func (f *Front) ResourceVersion() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rv
}

// event is one recorded change with its pre-encoded watch frame.
type event struct {
	rv    uint64
	frame []byte
}

// ring holds the most recent events in resourceVersion order.
type ring struct {
	buf  []event
	head int    // index of the oldest event
	n    int    // events held
	next uint64 // rv the next event will get
}

func newRing(size int) ring { return ring{buf: make([]event, max(size, 1))} }

// push appends ev and returns the rv of the event it evicted, or 0.
func (r *ring) push(ev event) (evicted uint64) {
	if r.n == len(r.buf) {
		evicted = r.buf[r.head].rv
		r.buf[r.head] = event{}
		r.head = (r.head + 1) % len(r.buf)
		r.n--
	}
	r.buf[(r.head+r.n)%len(r.buf)] = ev
	r.n++
	r.next = ev.rv + 1
	return evicted
}

// clear drops every event; the next one will have rv+1.
func (r *ring) clear(rv uint64) {
	clear(r.buf)
	r.head, r.n, r.next = 0, 0, rv+1
}

// after appends to dst the frames of events newer than rv, at most max.
func (r *ring) after(dst [][]byte, rv uint64, limit int) [][]byte {
	oldest := r.next - uint64(r.n)
	if rv+1 < oldest {
		return dst
	}
	for i := int(rv + 1 - oldest); i < r.n && len(dst) < limit; i++ {
		dst = append(dst, r.buf[(r.head+i)%len(r.buf)].frame)
	}
	return dst
}

// LoadPods replaces the front's state with the pods next yields, giving
// the i-th the resourceVersion i (from 1), and forgets the history. Each
// pod is encoded as it comes and only its message is kept: one compact
// encoding per object, so a million pods fit where a copy of their JSON
// and their decoded objects would not.
func (f *Front) LoadPods(next func(yield func(*corev1.Pod) bool)) error {
	pods := map[string][]byte{}
	var rv uint64
	var err error
	next(func(p *corev1.Pod) bool {
		rv++
		p.ResourceVersion = strconv.FormatUint(rv, 10)
		var msg []byte
		if msg, err = p.Marshal(); err != nil {
			err = fmt.Errorf("protofront: encode %s/%s: %w", p.Namespace, p.Name, err)
			return false
		}
		key := p.Namespace + "/" + p.Name
		if _, dup := pods[key]; dup {
			err = fmt.Errorf("protofront: pod %s given twice", key)
			return false
		}
		pods[key] = msg
		return true
	})
	if err != nil {
		return err
	}
	keys := slices.Sorted(mapKeys(pods))
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rv, f.keys, f.pods, f.floor = rv, keys, pods, rv
	f.hist.clear(rv)
	f.signalLocked()
	return nil
}
