package informer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/kwatch/kwatch/watch"
)

// list runs a paginated (or, after an expired continue token, a full) list
// into a new store and commits it. Pages are decoded item by item straight
// into the replacement, so peak memory is the new store, not list + store.
// continuing reports whether the error came from a continue page.
func (inf *Informer[T]) list(ctx context.Context, st state) (rv string, continuing bool, err error) {
	o := &inf.opts
	opts := watch.ListOptions{
		ResourceVersion:      st.listRV,
		ResourceVersionMatch: st.listMatch,
		Form:                 o.Form,
		IdleTimeout:          max(o.IdleTimeout, 0),
		JSON:                 o.jsonOnly,
	}
	if !st.fullList {
		opts.Limit = o.PageSize
	}
	repl := inf.store.NewReplacement()
	inf.stats.listed.Store(0)
	add := func(obj T) error {
		inf.addListed(repl, obj)
		return nil
	}
	var tokens continueTokens
	for {
		meta, err := watch.ListEach(ctx, o.Client, o.Resource, o.Scope, opts, add)
		if err != nil {
			return "", opts.Continue != "", err
		}
		if tokens.repeated(meta.Continue) {
			// A server handing back a token it gave before would keep us
			// paging forever.
			return "", true, fmt.Errorf("list of %s: the server repeated continue token %s: refusing to loop", o.Resource, clipToken(meta.Continue))
		}
		if meta.Continue == "" {
			if meta.ResourceVersion == "" {
				return "", false, errors.New("list answer has no metadata.resourceVersion: cannot watch from it")
			}
			inf.commit(repl, meta.ResourceVersion, st.distrust)
			return meta.ResourceVersion, false, nil
		}
		// The continue token carries the list's RV; sending an RV beside
		// it is refused by the server.
		opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = meta.Continue, "", ""
	}
}

// unsupportedStreamError says the server answered a streaming list with
// something a streaming list never sends: it does not support them.
type unsupportedStreamError struct{ what string }

func (e *unsupportedStreamError) Error() string {
	return "server does not support streaming lists: " + e.what
}

// errEndedEarly: the stream ended before the initial-events-end bookmark.
var errEndedEarly = errors.New("streaming list ended before its initial-events-end bookmark")

// streamList runs a watch with sendInitialEvents: ADDED events fill a new
// store until the bookmark annotated k8s.io/initial-events-end, which
// commits it; the same stream then goes on as a watch. committed reports
// whether the list part completed; the returned state's phase is then
// phaseWatch and end says how the watch part ended.
func (inf *Informer[T]) streamList(ctx context.Context, st state) (state, watchEnd, bool) {
	started := time.Now()
	stream, timeout, err := inf.openWatch(ctx, st.listRV, true)
	if err != nil {
		return st, watchEnd{err: err, early: true}, false
	}
	defer stream.Close()
	opened := time.Now()
	repl := inf.store.NewReplacement()
	inf.stats.listed.Store(0)
	for {
		ev, err := stream.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errEndedEarly
			}
			return st, watchEnd{err: err, opened: true, lasted: time.Since(opened), early: true}, false
		}
		switch ev.Type {
		case watch.Added:
			inf.addListed(repl, ev.Object)
			continue
		case watch.Bookmark:
			if ev.Object.GetAnnotations()[watch.InitialEventsEndAnnotation] == "true" {
				rv := ev.Object.GetResourceVersion()
				inf.commit(repl, rv, st.distrust)
				stream.SetParallelism(inf.opts.Decoder.Parallelism)
				st.rv, st.phase, st.synced, st.fullList, st.distrust = rv, phaseWatch, true, false, false
				st.streamFailures = 0
				st, end := inf.consume(st, stream)
				// The list part delivered the whole state: the stream made
				// progress whatever its watch part did.
				end.delivered = true
				end.lasted = time.Since(opened)
				end.early = endedEarly(end.err, started, timeout)
				return st, end, true
			}
			return st, watchEnd{err: &unsupportedStreamError{what: "a bookmark without the initial-events-end annotation came first"}, opened: true, early: true}, false
		default:
			return st, watchEnd{err: &unsupportedStreamError{what: fmt.Sprintf("a %s event came before the initial-events-end bookmark", ev.Type)}, opened: true, early: true}, false
		}
	}
}

// watch watches from st.rv and applies events until the stream ends.
func (inf *Informer[T]) watch(ctx context.Context, st state) (state, watchEnd) {
	started := time.Now()
	stream, timeout, err := inf.openWatch(ctx, st.rv, false)
	if err != nil {
		return st, watchEnd{err: err, early: true}
	}
	defer stream.Close()
	opened := time.Now()
	st, end := inf.consume(st, stream)
	end.lasted = time.Since(opened)
	end.early = endedEarly(end.err, started, timeout)
	return st, end
}

// endedEarly reports whether a watch ended before the timeoutSeconds it
// asked for: by anything but a clean end at or after that deadline.
// started is taken before the request is sent and the server counts the
// timeout from when it received it, so a clean end that our timeout caused
// is never early here. A watch sent without a timeout (MinWatchTimeout
// under a second) has no deadline of ours: every end of it is early.
func endedEarly(err error, started time.Time, timeout time.Duration) bool {
	return !errors.Is(err, io.EOF) || timeout <= 0 || time.Since(started) < timeout
}

// consume applies the stream's events until it ends.
func (inf *Informer[T]) consume(st state, stream *watch.Stream[T]) (state, watchEnd) {
	inf.stats.recovered()
	inf.stats.connected.Store(true)
	defer inf.stats.connected.Store(false)
	delivered := false
	for {
		ev, err := stream.Next()
		if err != nil {
			return st, watchEnd{err: err, opened: true, delivered: delivered}
		}
		st = inf.apply(st, ev)
		delivered = true
		var now bool
		if st, now = caughtUp(st); now {
			inf.markSynced()
		}
	}
}

// confirm asks the server whether it has reached st.rv, with the cheapest
// list that says so: one item, at resourceVersion=st.rv with
// resourceVersionMatch=NotOlderThan, under the informer's own namespace,
// selectors and encoding (so any server and any RBAC that let it list let
// it ask). The real server answers at once when it has reached the RV, and
// with 504 ResourceVersionTooLarge after about 3 s when it has not. The
// item is read and dropped; the list's own RV is returned. The idle
// deadline does not apply (the server's answer may take those 3 s before
// the first byte): confirmTimeout bounds the whole request instead.
func (inf *Informer[T]) confirm(ctx context.Context, st state) (string, error) {
	o := &inf.opts
	form := o.Form
	if form == watch.FormTableObject {
		form = watch.FormTable // the item is dropped: its whole object is not needed
	}
	opts := watch.ListOptions{
		ResourceVersion:      st.rv,
		ResourceVersionMatch: watch.MatchNotOlderThan,
		Limit:                1,
		Form:                 form,
		JSON:                 o.jsonOnly,
	}
	inf.stats.confirms.Add(1)
	ctx, cancel := context.WithTimeout(ctx, confirmTimeout)
	defer cancel()
	meta, err := watch.ListEach(ctx, o.Client, o.Resource, o.Scope, opts, func(T) error { return nil })
	return meta.ResourceVersion, err
}

// confirmTimeout bounds one confirmation: well above the real server's
// 3 s wait for an RV it has not reached.
const confirmTimeout = 30 * time.Second

// openWatch opens a watch from rv and returns it with the timeoutSeconds
// it asked of the server.
func (inf *Informer[T]) openWatch(ctx context.Context, rv string, initial bool) (*watch.Stream[T], time.Duration, error) {
	o := &inf.opts
	// A random timeout in [min, 2*min) spreads reconnections of many
	// clients; the server ends the stream cleanly when it passes.
	timeout := o.MinWatchTimeout + time.Duration(rand.Int64N(int64(o.MinWatchTimeout)))
	opts := watch.WatchOptions{
		ResourceVersion:   rv,
		AllowBookmarks:    true,
		TimeoutSeconds:    int64(timeout / time.Second),
		SendInitialEvents: initial,
		Form:              o.Form,
		Decoder:           o.Decoder,
		JSON:              o.jsonOnly,
	}
	if initial {
		// The initial events fill a new cache: the garbage collector needs
		// the other core more than the decoder does (the benchmark's sync
		// of 100,000 pods was 10-15% slower with two decoding cores).
		// streamList raises it again once the list is committed.
		opts.Decoder.Parallelism = 1
	}
	if o.IdleTimeout > 0 {
		opts.IdleTimeout = o.IdleTimeout
	}
	inf.stats.watches.Add(1)
	stream, err := watch.Watch[T](ctx, o.Client, o.Resource, o.Scope, opts)
	return stream, time.Duration(opts.TimeoutSeconds) * time.Second, err
}
