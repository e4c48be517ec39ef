package sim

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// watchQuery is a validated watch request.
type watchQuery struct {
	filter    filter
	mode      outputMode
	fromRV    uint64 // resume after this RV; 0 = start at the newest
	initial   bool   // send ADDED for the current state first
	initEnd   bool   // end the initial events with the initial-events-end bookmark
	minRV     uint64 // sendInitialEvents: the initial state must be at least this new
	bookmarks bool
	timeout   time.Duration // 0 = none
	include   string        // Table includeObject
}

// parseWatchQuery applies the real server's watch-option validation and RV semantics.
func parseWatchQuery(t target, q url.Values, mode outputMode) (watchQuery, *StatusError) {
	wq := watchQuery{mode: mode, include: q.Get("includeObject")}
	fieldSel := q.Get("fieldSelector")
	if t.name != "" { // a watch on one object is a watch on the collection by name
		fieldSel = joinSelector("metadata.name="+t.name, fieldSel)
	}
	f, serr := parseFilter(t.r, t.ns, q.Get("labelSelector"), fieldSel)
	if serr != nil {
		return wq, serr
	}
	wq.filter = f
	rv, rvm, sie := q.Get("resourceVersion"), q.Get("resourceVersionMatch"), q.Get("sendInitialEvents")
	switch {
	case sie != "" && rvm != "NotOlderThan":
		return wq, errListOptions("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
	case rvm != "" && sie == "":
		return wq, errListOptions("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
	case q.Get("continue") != "" && rvm != "":
		return wq, errListOptions("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided")
	}
	wq.bookmarks = q.Get("allowWatchBookmarks") == "true" || q.Get("allowWatchBookmarks") == "1"
	if ts := q.Get("timeoutSeconds"); ts != "" {
		n, err := strconv.ParseInt(ts, 10, 64)
		if err != nil || n < 0 {
			return wq, errBadRequest("invalid timeoutSeconds " + strconv.Quote(ts) + ": must be a non-negative integer")
		}
		wq.timeout = time.Duration(n) * time.Second
	}
	var n uint64
	if rv != "" && rv != "0" {
		if n, serr = parseRV(rv); serr != nil {
			return wq, serr
		}
	}
	switch {
	case sie == "true" || sie == "1":
		wq.initial, wq.initEnd, wq.minRV = true, true, n
	case sie != "": // sendInitialEvents=false: a plain watch from rv (or from now)
		wq.fromRV = n
	case n == 0: // "" or "0": the current state as ADDED, then changes
		wq.initial = true
	default:
		wq.fromRV = n
	}
	return wq, nil
}

func joinSelector(a, b string) string {
	if b == "" {
		return a
	}
	return a + "," + b
}

func (s *Server) serveWatch(w http.ResponseWriter, r *http.Request, t target) {
	mode, ok := negotiate(r.Header.Get("Accept"), false)
	if !ok {
		writeStatus(w, errNotAcceptable())
		return
	}
	wq, serr := parseWatchQuery(t, r.URL.Query(), mode)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	// The restart a watch belongs to is the one current when it arrives,
	// before it takes any fault: a DropWatches after that ends it, also when
	// it comes between the watch taking its faults and its start. Taken
	// later, such a watch would outlive the restart that was meant to end
	// it, and a fault queued just before the restart would wait for a next
	// watch that never comes.
	restart := s.store.currentRestart()
	if s.applyRequestFaults(w, r, t.r, verbWatch) {
		return
	}
	if n := s.watchers.Add(1); n > int64(s.opts.MaxWatchers) {
		s.watchers.Add(-1)
		writeStatus(w, errTooManyWatches(s.opts.MaxWatchers))
		return
	}
	defer s.watchers.Add(-1)
	ctx := r.Context()
	var deadline time.Time // timeoutSeconds runs from the request, as the real server's does
	if wq.timeout > 0 {
		deadline = time.Now().Add(wq.timeout)
	}
	ws := s.newWatchStream(w, r, t, &wq)
	if s.watchTookFaults != nil {
		s.watchTookFaults()
	}
	defer ws.out.flush() // however the stream ends, no buffered event is lost
	defer ws.giveBackIfRestarted(restart)
	var begin watchBegin
	if wq.initial && wq.minRV > 0 {
		// A streaming list at a resourceVersion the server has not reached: the
		// real server answers 200 at once, waits about 3 s for the RV, then sends
		// the list's 504 ResourceVersionTooLarge Status as an ERROR event
		// (watch-pods-future-rv-streaming.txt).
		if !ws.start() {
			return
		}
		// A restart while it waits ends the stream, as any watch's.
		if serr := s.waitForRV(ctx, wq.minRV, restart); serr != nil {
			if serr != errRestarted && ctx.Err() == nil && !s.isStopped() {
				ws.writeStatusEvent(serr)
			}
			return
		}
		begin = s.watchStart(t, &wq, restart)
	} else {
		begin = s.watchStart(t, &wq, restart)
		if !ws.start() {
			return
		}
	}
	if begin.tooOld {
		ws.writeStatusEvent(errGone(msgWatchTooOld))
		return
	}
	for _, o := range begin.initial {
		if !ws.send(evTypeAdded, o) {
			return
		}
	}
	if wq.initEnd && wq.bookmarks && !ws.bookmark(begin.cursor, true) {
		return
	}
	ws.out.flush()
	ws.loop(ctx, begin, deadline)
}

// watchBegin is where a watch starts: the events after cursor follow the initial
// objects; tooOld means cursor is no longer in the history.
type watchBegin struct {
	restart <-chan struct{}
	initial []*object
	cursor  uint64
	tooOld  bool
}

// watchStart takes the starting point of a watch atomically with its initial
// state; restart is the one the watch arrived under (currentRestart).
func (s *Server) watchStart(t target, wq *watchQuery, restart <-chan struct{}) watchBegin {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	b := watchBegin{restart: restart, cursor: st.rv}
	switch {
	case wq.initial:
		spec := listSpec{r: t.r}
		if t.ns != "" {
			spec.prefix = t.ns + "/"
		}
		if !wq.filter.empty() {
			spec.match = wq.filter.matches
		}
		b.initial = st.listLocked(spec).items
	case wq.fromRV > 0:
		b.cursor = wq.fromRV
		b.tooOld = wq.fromRV < st.floorLocked()
	}
	return b
}

// watchBatch is how many events a watcher copies out of the history per lock.
const watchBatch = 256

// watchTimers are the timers of one watch stream; a nil channel never fires.
type watchTimers struct {
	end     <-chan time.Time // timeoutSeconds has passed
	preEnd  <-chan time.Time // Options.DeadlineBookmarkLead before end
	tick    <-chan time.Time // every Options.BookmarkInterval
	cleanup []func()
}

func (ws *watchStream) newTimers(deadline time.Time) *watchTimers {
	tm := &watchTimers{}
	opts := &ws.s.opts
	if !deadline.IsZero() {
		timer := time.NewTimer(time.Until(deadline))
		tm.end, tm.cleanup = timer.C, append(tm.cleanup, func() { timer.Stop() })
		// Like the real watch cache, only a watch that lasts longer than the lead
		// gets a pre-deadline bookmark.
		if lead := opts.DeadlineBookmarkLead; ws.q.bookmarks && lead > 0 && time.Until(deadline) > lead {
			pre := time.NewTimer(time.Until(deadline) - lead)
			tm.preEnd, tm.cleanup = pre.C, append(tm.cleanup, func() { pre.Stop() })
		}
	}
	if ws.q.bookmarks {
		ticker := time.NewTicker(opts.BookmarkInterval)
		tm.tick, tm.cleanup = ticker.C, append(tm.cleanup, ticker.Stop)
	}
	return tm
}

func (tm *watchTimers) stop() {
	for _, f := range tm.cleanup {
		f()
	}
}

// loop streams live events after begin.cursor until the client leaves, the deadline
// passes, the server stops or restarts, or the watcher falls out of the history window.
//
// Bookmarks carry cursor, the newest RV the watcher has passed (of any resource). The
// periodic one is sent whenever the server has reached cursor (a watch from a future
// RV gets none); the pre-deadline one, as the real watch cache's, only if the watched
// resource has an event newer than the watch's start (resRV > begin.cursor), and only
// once the watcher has caught up with the history.
func (ws *watchStream) loop(ctx context.Context, begin watchBegin, deadline time.Time) {
	s, t := ws.s, ws.t
	tm := ws.newTimers(deadline)
	defer tm.stop()
	cursor, resRV := begin.cursor, uint64(0)
	preEndDue := false
	buf := make([]event, watchBatch)
	for {
		evs, wait, lost := s.store.eventsAfter(cursor, buf)
		if lost {
			s.terminated.Add(1) // too slow: end the stream as the real server does
			return
		}
		if closed(begin.restart) {
			// A restart ends the stream before any event written after it:
			// DropWatches closes the channel under the store's lock, so an
			// event read here that came after the restart finds it closed.
			// Without this check the select below could take a batch before
			// the restart, and a test that restarts, writes and waits for the
			// next watch to see the write would find it on the old one.
			return
		}
		for i := range evs {
			ev := &evs[i]
			cursor = ev.rv
			if ev.res != t.r {
				continue
			}
			resRV = ev.rv
			typ, o := ws.classify(ev)
			if o == nil {
				continue
			}
			if !ws.hold(ctx, ev.at, begin.restart) || !ws.send(typ, o) {
				return
			}
		}
		clear(evs)
		var idle <-chan struct{} = closedChan // more may be waiting: check the others without blocking
		if len(evs) == 0 {
			idle = wait
			if preEndDue {
				preEndDue = false
				if resRV > begin.cursor && (!ws.hold(ctx, s.store.clock(), begin.restart) || !ws.bookmark(cursor, false)) {
					return
				}
			}
			ws.out.flush() // caught up: send what is buffered before waiting
		}
		select {
		case <-idle:
		case <-tm.tick:
			if cursor > s.ResourceVersion() {
				// A watch from a resourceVersion ahead of the server (a client
				// that saw a newer server: an etcd restore, a replaced control
				// plane) stays silent, as the real server's does
				// (watch-pods-future-rv.txt): a bookmark here would carry an RV
				// the server has not reached.
				continue
			}
			if !ws.hold(ctx, s.store.clock(), begin.restart) || !ws.bookmark(cursor, false) {
				return
			}
			ws.out.flush()
		case <-tm.preEnd:
			preEndDue = true // checked once the watcher has read every event so far
		case <-tm.end:
			return
		case <-ctx.Done():
			return
		case <-begin.restart:
			return
		case <-s.stopped():
			return
		}
	}
}

// closed reports whether c is closed, without waiting; a nil c never is.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// classify turns a stored event into what this watcher sees: an object that enters
// the selector is ADDED, one that leaves it is DELETED (its previous state at the
// event's RV), as the real watch cache does.
func (ws *watchStream) classify(ev *event) (evType, *object) {
	f := &ws.q.filter
	switch ev.typ {
	case evAdded:
		if f.matches(ev.obj) {
			return evTypeAdded, ev.obj
		}
	case evModified:
		now, before := f.matches(ev.obj), f.matches(ev.prev)
		switch {
		case now && before:
			return evTypeModified, ev.obj
		case now:
			return evTypeAdded, ev.obj
		case before:
			return evTypeDeleted, ev.prev.withRV(ev.rv)
		}
	case evDeleted:
		if f.matches(ev.prev) {
			return evTypeDeleted, ev.obj
		}
	}
	return 0, nil
}
