package sim

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"
)

// store holds every resource's objects, the global resourceVersion and the event
// history. One lock guards it all: a commit is a few map operations plus one append
// to the ring, so writers are short; watchers read under the read lock.
type store struct {
	mu     sync.RWMutex
	clock  func() time.Time
	window time.Duration // Options.HistoryWindow

	rv        uint64               // the newest committed resourceVersion
	resources map[string]*resource // by key ("pods", "deployments.apps")
	ordered   []*resource          // registration order, for discovery
	hist      history
	// floor: a watch or exact list from a resourceVersion below it gets 410. It is at
	// least the newest evicted event, and Compact raises it to rv.
	floor uint64
	// tokenFloor: continue tokens minted at a resourceVersion below it get 410.
	tokenFloor uint64
	// notify is closed and replaced on every commit (batch), waking waiting watchers.
	notify chan struct{}
	// restart is closed and replaced by dropWatches: every open watch ends.
	restart chan struct{}
	rng     *rand.Rand // uids and generated names; guarded by mu
	// journals record every event pushed (Server.Journal); guarded by mu.
	journals []*journal
}

func newStore(opts *Options) *store {
	return &store{
		clock:     opts.Clock,
		window:    opts.HistoryWindow,
		resources: make(map[string]*resource),
		hist:      newHistory(opts.HistorySize),
		notify:    make(chan struct{}),
		restart:   make(chan struct{}),
		rng:       rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
	}
}

// currentRestart returns the channel the next DropWatches closes.
func (st *store) currentRestart() <-chan struct{} {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.restart
}

// register adds a resource type; registering the same key twice is an error.
func (s *store) register(ri ResourceInfo) error {
	if err := ri.validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.resources[ri.key()]; ok {
		return fmt.Errorf("sim: resource %q is already registered", ri.key())
	}
	r := newResource(ri)
	s.resources[ri.key()] = r
	s.ordered = append(s.ordered, r)
	return nil
}

// lookup finds a resource by "pods", "deployments.apps" or a unique plural ("deployments").
func (s *store) lookup(name string) (*resource, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if r, ok := s.resources[name]; ok {
		return r, nil
	}
	var found *resource
	for _, r := range s.ordered {
		if r.info.Resource == name {
			if found != nil {
				return nil, fmt.Errorf("sim: resource name %q is ambiguous; use plural.group", name)
			}
			found = r
		}
	}
	if found == nil {
		return nil, fmt.Errorf("sim: unknown resource %q", name)
	}
	return found, nil
}

// byGVR finds the resource served at /api(s)/group/version/plural.
func (s *store) byGVR(group, version, plural string) *resource {
	s.mu.RLock()
	defer s.mu.RUnlock()
	key := plural
	if group != "" {
		key = plural + "." + group
	}
	r := s.resources[key]
	if r == nil || r.info.Version != version {
		return nil
	}
	return r
}

// newUIDLocked returns a random version-4 style uid from the seeded generator.
func (s *store) newUIDLocked() string {
	a, b := s.rng.Uint64(), s.rng.Uint64()
	a = a&^(0xf<<12) | 4<<12
	b = b&^(0x3<<62) | 2<<62
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", a>>32, (a>>16)&0xffff, a&0xffff, b>>48, b&0xffffffffffff)
}

// putLocked commits o (created when prev is nil, else replacing prev).
func (s *store) putLocked(r *resource, o *object, enc *encoded, prev *object) {
	s.rv++
	enc.commit(o, s.rv)
	r.objs[o.key] = o
	typ := evModified
	if prev == nil {
		typ = evAdded
		r.pending = append(r.pending, o.key)
	}
	s.pushLocked(event{rv: s.rv, typ: typ, res: r, obj: o, prev: prev, at: s.clock()})
}

// deleteLocked removes prev; the DELETED event carries its last state at the new rv.
func (s *store) deleteLocked(r *resource, prev *object) *object {
	s.rv++
	tomb := prev.withRV(s.rv)
	delete(r.objs, prev.key)
	r.deleted++
	s.pushLocked(event{rv: s.rv, typ: evDeleted, res: r, obj: tomb, prev: prev, at: s.clock()})
	return tomb
}

func (s *store) pushLocked(ev event) {
	s.journalLocked(ev)
	if ev := s.hist.push(ev); ev > s.floor {
		s.floor = ev
	}
}

// signalLocked wakes every waiting watcher; called once per commit or batch.
func (s *store) signalLocked() {
	close(s.notify)
	s.notify = make(chan struct{})
}

// floorLocked is the oldest resourceVersion a client may resume from now.
func (s *store) floorLocked() uint64 {
	f := s.floor
	if s.window > 0 {
		if wf := s.hist.windowFloor(s.clock().Add(-s.window)); wf > f {
			f = wf
		}
	}
	return f
}

// listSpec selects a page of a resource's objects.
type listSpec struct {
	r      *resource
	prefix string // "ns/" for a namespaced list, "" for all
	start  string // first key to consider (inclusive); "" = from the beginning
	limit  int    // 0 = no limit
	match  func(*object) bool
	atRV   uint64 // 0 = the current state
	count  bool   // compute remaining (no selectors)
}

// listResult is one page of objects and where the next page starts.
type listResult struct {
	items     []*object
	rv        uint64
	next      string // start key of the next page; "" if this was the last
	remaining int64  // items after this page; -1 if not computed
}

// listLocked returns a page as of spec.atRV (which must be retained) or now. The
// caller holds mu for writing (the key index may be merged).
func (s *store) listLocked(spec listSpec) listResult {
	r := spec.r
	res := listResult{rv: s.rv, remaining: -1}
	var overlay map[string]*object
	var okeys []string
	if spec.atRV != 0 && spec.atRV < s.rv {
		res.rv = spec.atRV
		overlay, okeys = s.overlayLocked(r, spec.atRV)
	}
	lo := spec.start
	if lo < spec.prefix {
		lo = spec.prefix
	}
	inRange := func(k string) bool { return spec.prefix == "" || strings.HasPrefix(k, spec.prefix) }
	keys := r.sortedLocked()
	i := sort.SearchStrings(keys, lo)
	j := sort.SearchStrings(okeys, lo)
	stateAt := func(k string) *object {
		if o, ok := overlay[k]; ok {
			return o
		}
		return r.objs[k]
	}
	for i < len(keys) || j < len(okeys) {
		var k string
		switch {
		case j >= len(okeys) || (i < len(keys) && keys[i] < okeys[j]):
			k = keys[i]
			i++
		case i >= len(keys) || okeys[j] < keys[i]:
			k = okeys[j]
			j++
		default: // the same key in both
			k = keys[i]
			i, j = i+1, j+1
		}
		if !inRange(k) {
			break
		}
		o := stateAt(k)
		if o == nil || (spec.match != nil && !spec.match(o)) {
			continue
		}
		if spec.limit > 0 && len(res.items) == spec.limit {
			res.next = k
			if spec.count {
				res.remaining = s.countFromLocked(keys, okeys, overlay, r, k, spec.prefix)
			}
			break
		}
		res.items = append(res.items, o)
	}
	return res
}

// overlayLocked returns, for every key of r changed after atRV, its state at atRV
// (nil: absent then), and those keys in order. Laid over the current objects it
// gives the snapshot at atRV.
func (s *store) overlayLocked(r *resource, atRV uint64) (map[string]*object, []string) {
	overlay := make(map[string]*object)
	var keys []string
	for rv := atRV + 1; rv <= s.rv; rv++ {
		ev := s.hist.get(rv)
		if ev.res != r {
			continue
		}
		if _, seen := overlay[ev.obj.key]; !seen {
			overlay[ev.obj.key] = ev.prev
			keys = append(keys, ev.obj.key)
		}
	}
	sort.Strings(keys)
	return overlay, keys
}

// countFromLocked counts the keys from k to the end of the prefix range as of the
// overlay's resourceVersion.
func (s *store) countFromLocked(keys, okeys []string, overlay map[string]*object, r *resource, k, prefix string) int64 {
	end := len(keys)
	oend := len(okeys)
	if prefix != "" {
		hi := prefix[:len(prefix)-1] + string(prefix[len(prefix)-1]+1)
		end = sort.SearchStrings(keys, hi)
		oend = sort.SearchStrings(okeys, hi)
	}
	n := int64(end - sort.SearchStrings(keys, k))
	for _, ok := range okeys[sort.SearchStrings(okeys, k):oend] {
		if overlay[ok] != nil {
			n++
		}
		if r.objs[ok] != nil {
			n--
		}
	}
	return n
}

// eventsAfter copies up to len(buf) events newer than cursor. With none available it
// returns the channel that the next commit closes. lost means the events after cursor
// were evicted: the watcher fell too far behind.
func (s *store) eventsAfter(cursor uint64, buf []event) (evs []event, wait <-chan struct{}, lost bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if cursor >= s.rv {
		return nil, s.notify, false
	}
	if !s.hist.retained(cursor) {
		return nil, nil, true
	}
	n := int(s.rv - cursor)
	if n > len(buf) {
		n = len(buf)
	}
	for i := range n {
		buf[i] = *s.hist.get(cursor + 1 + uint64(i))
	}
	return buf[:n], nil, false
}
