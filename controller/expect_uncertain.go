package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"time"

	"github.com/kwatch/kwatch/kube"
)

// A write of unknown outcome (kube.Written.Uncertain: the connection broke
// while it was out, the answer could not be read, or the answer was a 500,
// 502, 503 or 504 other than a create's, update's or patch's admission
// webhook that could not be called: kube.AnswerOutcomeUnknown) may have been done, and may even be done later: the client gave
// up, but the server may still be working on it. A create whose answer
// was lost makes its object all the same, and the key's retry on a cache
// that does not show it yet would make it again (a second object, when
// the create used generateName). So the key waits in two steps.
//
//  1. Until the server can no longer apply the write: uncertainSettle
//     after the client learned of the failure. kube-apiserver ends a
//     request at its --request-timeout (60 s by default; its handler's
//     context ends then, so no storage write starts later), but a storage
//     write already sent to etcd when the deadline passed is applied
//     after the 504 has been answered: etcd's client gives a request up
//     after 7 s by default (5 s plus two election timeouts), and a
//     proposal already in the leader's log may still commit after that,
//     within an election or so. A client whose connection was reset by a
//     load balancer, or whose own deadline ended the call, learned of the
//     failure no earlier than the server received the request, so the
//     server's deadline is at most 60 s after that point too. A read
//     during this time proves nothing: an object not there yet may still
//     come, so nothing is read before the wait ends.
//  2. Then until each cache of the resource that may hold the object (its
//     namespace's; the labels are unknown) has passed the server's
//     resourceVersion read at that time (a list of at most one item,
//     served from the latest state): the write, if it was done, is at or
//     below it. This wait has the ordinary bound (ExpectationTimeout)
//     from the read.
//
// The object's name may be unknown (generateName), so the write is waited
// on under its resource's ref (key ""), which every cache event of the
// resource checks (observed). The first step's end is a time, not an
// event: the parked key's timer fires then and queues the key, and the
// worker that takes it does the read (settleUncertain), so a write of
// unknown outcome starts no goroutine of its own and its read is made by
// the worker that would reconcile the key anyway.
//
// What this does not cover: a server whose request timeout is longer than
// 60 s (the wait is then too short by the difference), a request that a
// proxy held back and forwarded after the client gave up, and a server
// whose resourceVersions are not one increasing sequence with its
// watches' (an aggregated API server's may be anything): a version that
// is not a decimal number, or lower than one a cache already shows, is
// not used, and the key waits for the bound from the first step's end.

// uncertainSettle is how long after a write of unknown outcome the server
// may still apply it: kube-apiserver's default request timeout (60 s) and
// a margin for a storage write already on its way then (see above).
const uncertainSettle = 75 * time.Second

// serverRVTimeout bounds the read of the server's resourceVersion after a
// write of unknown outcome; without an answer the key waits for the bound.
const serverRVTimeout = 10 * time.Second

// uncertainOutcome is what a pendingWrite of unknown outcome needs to
// read the server's resourceVersion after it.
type uncertainOutcome struct {
	res     kube.Resource
	ns      string
	settles time.Time // when the server can no longer apply the write
	read    bool      // the server's version was read (the write's rv, if usable)
}

func (u *uncertainOutcome) String() string {
	s := "a write of unknown outcome of " + u.res.String()
	if u.ns != "" {
		s += " in " + u.ns
	}
	if !u.read {
		return s + " (the server may still apply it)"
	}
	return s
}

// unread reports whether w is a write of unknown outcome whose server
// version is not read yet. Expects expectations.mu held.
func (w *pendingWrite) unread() bool { return w.uncertain != nil && !w.uncertain.read }

// uncertainWrite makes the pendingWrite of w, a write of unknown outcome:
// no cache shows it until its version is read.
func uncertainWrite(w kube.Written, now time.Time) *pendingWrite {
	return &pendingWrite{ref: objRef{resKeyOf(w.Resource), ""}, at: now, rv: math.MaxUint64,
		uncertain: &uncertainOutcome{res: w.Resource, ns: w.Namespace, settles: now.Add(uncertainSettle)}}
}

// boundFrom is when the bound on w starts: for a write of unknown outcome
// not read yet, when the server can no longer apply it.
func (w *pendingWrite) boundFrom() time.Time {
	if w.unread() {
		return w.uncertain.settles
	}
	return w.at
}

// nextSettleLocked is the earliest time one of kw's writes of unknown
// outcome is due to be read, and whether it has one. Expects
// expectations.mu held.
func (kw *keyWait) nextSettleLocked() (time.Time, bool) {
	var next time.Time
	for _, w := range kw.writes {
		if w.unread() && (next.IsZero() || w.uncertain.settles.Before(next)) {
			next = w.uncertain.settles
		}
	}
	return next, !next.IsZero()
}

// dueLocked reports whether one of kw's writes of unknown outcome is due
// to be read at now. Expects expectations.mu held.
func (kw *keyWait) dueLocked(now time.Time) bool {
	next, ok := kw.nextSettleLocked()
	return ok && !now.Before(next)
}

// settleUncertain reads, before kr's reconcile, the server's
// resourceVersion for each of kr's writes of unknown outcome whose server
// can no longer apply them, and makes the caches wait for it: the bound
// starts again from the read. The read is made with the reconcile's
// context, without holding the lock; a read that fails (but for that
// context's end, after which the next reconcile reads again) leaves the
// write unseen until the bound.
func (e *expectations) settleUncertain(ctx context.Context, kr keyRef) {
	if e.serverRV == nil {
		return
	}
	now := time.Now()
	e.mu.Lock()
	kw := e.keys[kr]
	var due []*pendingWrite
	if kw != nil {
		for _, w := range kw.writes {
			if w.unread() && !now.Before(w.uncertain.settles) {
				due = append(due, w)
			}
		}
	}
	e.mu.Unlock()
	for _, w := range due {
		u := w.uncertain
		rctx, cancel := context.WithTimeout(ctx, serverRVTimeout)
		rv, err := e.serverRV(rctx, u.res, u.ns)
		cancel()
		if err != nil && ctx.Err() != nil {
			return // stopping: read again at the next reconcile
		}
		e.mu.Lock()
		if err == nil {
			err = comparable(rv, w.caches)
		}
		u.read = true
		if err == nil && e.keys[kr] == kw {
			w.rv = rv
			kw.last = maxTime(kw.last, time.Now())
		}
		e.mu.Unlock()
		if err != nil { // logged without e.mu (see park)
			e.log.Debug("a write's outcome is unknown and the server's resourceVersion is not usable: its key waits for the bound",
				"controller", kr.ctl, "key", kr.key.String(), "resource", u.res.String(), "namespace", u.ns, "err", err)
		}
	}
}

// comparable reports an error when rv, read from the server, is 0 or
// lower than a version one of caches shows: the server's versions are then not
// one sequence with its watches' (or it went back in time), and rv says
// nothing about what the caches show. Expects expectations.mu held.
func comparable(rv uint64, caches []*cacheEntry) error {
	if rv == 0 {
		return errors.New("the server's resourceVersion is 0") // no version: any cache passes it
	}
	for _, c := range caches {
		if crv, err := strconv.ParseUint(c.storeRV(), 10, 64); err == nil && crv > rv {
			return fmt.Errorf("the server's resourceVersion %d is lower than the %d cache %s shows", rv, crv, c.name)
		}
	}
	return nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// serverRV reads the server's current resourceVersion of res in ns: the
// version of a list of at most one item, served from the latest state.
func (m *Manager) serverRV(ctx context.Context, res kube.Resource, ns string) (uint64, error) {
	resp, err := m.c.Send(ctx, kube.Request{Path: res.Path(ns), Query: url.Values{"limit": {"1"}}})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	const maxList = 16 << 20 // one item: an object's limit and then some
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxList)).Decode(&list); err != nil {
		return 0, fmt.Errorf("the list of %s: %w", res, err)
	}
	rv, err := strconv.ParseUint(list.Metadata.ResourceVersion, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("the list of %s: resourceVersion %q is not a number", res, list.Metadata.ResourceVersion)
	}
	return rv, nil
}

// uncertainHolders are the caches a write of unknown outcome waits on:
// every cache of its resource whose namespace may hold the object (its
// labels are unknown).
func (m *Manager) uncertainHolders(w kube.Written) []*cacheEntry {
	rk := resKeyOf(w.Resource)
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*cacheEntry
	for _, c := range m.caches {
		ns := c.scope.Namespace
		if c.res == rk && (ns == "" || w.Namespace == "" || ns == w.Namespace) {
			out = append(out, c)
		}
	}
	return out
}
