package informer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// list runs a paginated (or, after an expired continue token, a full) list
// into a new store and commits it. Pages are decoded item by item straight
// into the replacement, so peak memory is the new store, not list + store.
// continuing reports whether the error came from a continue page.
func (inf *Informer[T]) list(ctx context.Context, st state) (rv string, continuing bool, err error) {
	o := &inf.opts
	opts := watch.ListOptions{
		LabelSelector:        o.LabelSelector,
		FieldSelector:        o.FieldSelector,
		ResourceVersion:      st.listRV,
		ResourceVersionMatch: st.listMatch,
		MetadataOnly:         o.MetadataOnly,
		IdleTimeout:          max(o.IdleTimeout, 0),
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
	seen := map[string]struct{}{}
	for {
		meta, err := watch.ListEach(ctx, o.Client, o.Resource, o.Namespace, opts, add)
		if err != nil {
			return "", opts.Continue != "", err
		}
		if _, loop := seen[meta.Continue]; loop {
			// A server handing back a token it gave before would keep us
			// paging forever.
			return "", true, fmt.Errorf("list of %s: the server repeated continue token %q: refusing to loop", o.Resource, meta.Continue)
		}
		if meta.Continue != "" {
			seen[meta.Continue] = struct{}{}
		}
		if meta.Continue == "" {
			if meta.ResourceVersion == "" {
				return "", false, errors.New("list answer has no metadata.resourceVersion: cannot watch from it")
			}
			inf.commit(repl, meta.ResourceVersion)
			return meta.ResourceVersion, false, nil
		}
		// The continue token carries the list's RV; sending an RV beside
		// it is refused by the server.
		opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = meta.Continue, "", ""
	}
}

// addListed puts one object of a list (paginated or streaming) into the
// store being built. An object the transform or the store refuses is
// counted and logged; the list goes on.
func (inf *Informer[T]) addListed(repl *store.Replacement[T], obj T) {
	inf.stats.listed.Add(1)
	obj, ok := inf.transform(obj)
	if !ok {
		return
	}
	if err := repl.Add(obj); err != nil {
		inf.stats.storeErrors.Add(1)
		inf.opts.Logger.Error("informer could not store listed object", "resource", inf.opts.Resource.String(), "err", err)
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
// phaseWatch.
func (inf *Informer[T]) streamList(ctx context.Context, st state) (state, bool, error) {
	stream, err := inf.openWatch(ctx, st.listRV, true)
	if err != nil {
		return st, false, err
	}
	defer stream.Close()
	repl := inf.store.NewReplacement()
	inf.stats.listed.Store(0)
	for {
		ev, err := stream.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errEndedEarly
			}
			return st, false, err
		}
		switch ev.Type {
		case watch.Added:
			inf.addListed(repl, ev.Object)
			continue
		case watch.Bookmark:
			if ev.Object.GetAnnotations()[watch.InitialEventsEndAnnotation] == "true" {
				rv := ev.Object.GetResourceVersion()
				inf.commit(repl, rv)
				stream.SetParallelism(inf.opts.Decoder.Parallelism)
				st.rv, st.phase, st.synced, st.fullList = rv, phaseWatch, true, false
				if st.streaming == streamUnknown {
					st.streaming = streamYes
				}
				st, err = inf.consume(st, stream)
				return st, true, err
			}
			return st, false, &unsupportedStreamError{what: "a bookmark without the initial-events-end annotation came first"}
		default:
			return st, false, &unsupportedStreamError{what: fmt.Sprintf("a %s event came before the initial-events-end bookmark", ev.Type)}
		}
	}
}

// watch watches from st.rv and applies events until the stream ends.
func (inf *Informer[T]) watch(ctx context.Context, st state) (state, error) {
	stream, err := inf.openWatch(ctx, st.rv, false)
	if err != nil {
		return st, err
	}
	defer stream.Close()
	return inf.consume(st, stream)
}

func (inf *Informer[T]) consume(st state, stream *watch.Stream[T]) (state, error) {
	inf.stats.recovered()
	inf.stats.connected.Store(true)
	defer inf.stats.connected.Store(false)
	for {
		ev, err := stream.Next()
		if err != nil {
			return st, err
		}
		st = inf.apply(st, ev)
	}
}

func (inf *Informer[T]) openWatch(ctx context.Context, rv string, initial bool) (*watch.Stream[T], error) {
	o := &inf.opts
	// A random timeout in [min, 2*min) spreads reconnections of many
	// clients; the server ends the stream cleanly when it passes.
	timeout := o.MinWatchTimeout + time.Duration(rand.Int64N(int64(o.MinWatchTimeout)))
	opts := watch.WatchOptions{
		LabelSelector:     o.LabelSelector,
		FieldSelector:     o.FieldSelector,
		ResourceVersion:   rv,
		AllowBookmarks:    true,
		TimeoutSeconds:    int64(timeout / time.Second),
		SendInitialEvents: initial,
		MetadataOnly:      o.MetadataOnly,
		Decoder:           o.Decoder,
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
	return watch.Watch[T](ctx, o.Client, o.Resource, o.Namespace, opts)
}
