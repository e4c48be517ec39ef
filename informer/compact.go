package informer

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// StoreMode chooses how an informer's store keeps objects.
type StoreMode int

const (
	// StoreTyped keeps each object decoded into T.
	StoreTyped StoreMode = iota
	// StoreCompact keeps each object as the server encoded it (protobuf
	// where T decodes protobuf and the client does not ask for JSON, JSON
	// otherwise) in one pointer-free allocation beside its metadata
	// (watch.Raw), and decodes it into T when a reader or handler asks.
	//
	// What changes against StoreTyped:
	//   - Memory: about the encoded size per object, which the garbage
	//     collector marks without scanning; no decode on arrival.
	//   - Reads: Store().Get decodes (one decode per version, shared through
	//     the DecodeCache); List, Snapshot and ByIndex decode every object
	//     they return, so prefer keys (ListKeys, IndexKeys) and Get.
	//   - Handlers: a KeyHandler never decodes; a raw handler (AddRawHandler)
	//     gets old and new metadata at once and decodes (Decode) only the
	//     object it asks for; any other handler decodes the objects it is
	//     given. All decodes go through the cache a reconcile's Get uses.
	//   - Indexes: the namespace index and RawIndexers read metadata only;
	//     Indexers and a custom Key decode each object version they see.
	//   - An object that does not decode into T is found on read: Get
	//     reports it absent, a handler is not called for it, and the
	//     failure is counted (Stats.DecodeErrors) and shown as a refusal in
	//     Health. In StoreTyped it is refused on arrival.
	//   - Transform and Table are not available (New returns an error):
	//     both work on decoded objects.
	StoreCompact
)

// String returns "typed" or "compact".
func (m StoreMode) String() string {
	switch m {
	case StoreTyped:
		return "typed"
	case StoreCompact:
		return "compact"
	}
	return fmt.Sprintf("StoreMode(%d)", int(m))
}

// compactSide is the part of an Informer[T] in StoreCompact: an informer of
// Raws does the protocol and keeps the store; T is decoded on read.
type compactSide[T watch.Object] struct {
	raw     *Informer[*watch.Raw]
	codec   *watch.RawCodec[T]
	cache   *decodeCache[T]
	key     store.KeyFunc[T] // nil: the Raw's own metadata key
	decodes atomic.Int64
	errs    atomic.Int64
}

// newCompact returns the compact side of an informer with opts.
func newCompact[T watch.Object](opts Options[T]) (*compactSide[T], error) {
	switch {
	case opts.Transform != nil:
		return nil, errors.New("informer: Transform needs Store: StoreTyped (it works on decoded objects)")
	case opts.Table:
		return nil, errors.New("informer: Table needs Store: StoreTyped")
	}
	c := &compactSide[T]{codec: watch.NewRawCodec[T](), cache: newDecodeCache[T](opts.DecodeCache), key: opts.Key}
	rawOpts := Options[*watch.Raw]{
		Client: opts.Client, Resource: opts.Resource, Namespace: opts.Namespace,
		LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector,
		ListMode: opts.ListMode, PageSize: opts.PageSize, MetadataOnly: opts.MetadataOnly,
		Backoff: opts.Backoff, MinWatchTimeout: opts.MinWatchTimeout, IdleTimeout: opts.IdleTimeout,
		ResyncPeriod: opts.ResyncPeriod, Decoder: opts.Decoder, Logger: opts.Logger,
		jsonOnly:  !watch.DecodesProtobuf[T](),
		Transform: rawTransform(opts.DropManagedFields),
		Indexers:  make(map[string]store.IndexFunc[*watch.Raw]),
	}
	if opts.Key != nil {
		rawOpts.Key = func(r *watch.Raw) (string, error) {
			obj, err := c.decode(r)
			if err != nil {
				return "", err
			}
			return opts.Key(obj)
		}
	}
	for name, fn := range opts.RawIndexers {
		rawOpts.Indexers[name] = fn
	}
	for name, fn := range opts.Indexers {
		if fn == nil {
			continue
		}
		if _, dup := opts.RawIndexers[name]; dup {
			return nil, fmt.Errorf("informer: index %q is both in Indexers and RawIndexers", name)
		}
		rawOpts.Indexers[name] = func(r *watch.Raw) ([]string, error) {
			obj, err := c.decode(r)
			if err != nil {
				return nil, err
			}
			return fn(obj)
		}
	}
	raw, err := New(rawOpts)
	if err != nil {
		return nil, err
	}
	c.raw = raw
	if opts.Snapshot != nil {
		if raw.snap, err = newSnapshotter(raw, *opts.Snapshot, snapshotEncoding(rawOpts)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// rawTransform is the compact store's Transform: none, or dropping
// managedFields from the bytes.
func rawTransform(drop bool) func(*watch.Raw) (*watch.Raw, error) {
	if !drop {
		return nil
	}
	return (*watch.Raw).WithoutManagedFields
}

// snapshotEncoding names what a compact informer's records hold, so that a
// snapshot is loaded only by an informer that would have received the same.
func snapshotEncoding(o Options[*watch.Raw]) string {
	enc := "protobuf"
	if o.jsonOnly || o.Client.ContentType() == kube.ContentTypeJSON {
		enc = "json"
	}
	if o.MetadataOnly {
		enc += "+metadata"
	}
	if o.Transform != nil {
		enc += "-managedFields"
	}
	return enc
}

// decode returns r decoded into T, from the cache when another reader or
// a handler decoded this version already. Failures are counted and shown
// in Health once per version.
func (c *compactSide[T]) decode(r *watch.Raw) (T, error) {
	if obj, err, ok := c.cache.get(r); ok {
		return obj, err
	}
	c.decodes.Add(1)
	obj, err := c.codec.Decode(r)
	if err != nil {
		c.errs.Add(1)
		err = fmt.Errorf("%s/%s at resourceVersion %s does not decode: %w", r.GetNamespace(), r.GetName(),
			r.GetResourceVersion(), err)
		c.raw.stats.refused(err)
		c.raw.opts.Logger.Error("informer could not decode a stored object; readers do not see it",
			"resource", c.raw.opts.Resource.String(), "namespace", r.GetNamespace(), "name", r.GetName(), "err", err)
	}
	c.cache.put(r, obj, err)
	return obj, err
}

// RawStore is the compact store itself: every object as a watch.Raw, read
// without decoding (metadata, labels, the encoded body). In StoreTyped it
// is an empty view of a store that never fills.
func (inf *Informer[T]) RawStore() store.View[*watch.Raw] {
	if inf.compact == nil {
		return emptyRawStore
	}
	return inf.compact.raw.Store()
}

var emptyRawStore = store.New(store.Options[*watch.Raw]{}).View()

// compactStats adds the compact side's counters to the inner informer's.
func (c *compactSide[T]) stats() Stats {
	s := c.raw.Stats()
	s.Decodes, s.DecodeErrors = c.decodes.Load(), c.errs.Load()
	return s
}

// run runs the inner informer.
func (c *compactSide[T]) run(ctx context.Context) error { return c.raw.Run(ctx) }

// handler adapts h to the Raw informer: a KeyHandler gets keys as they
// are; any other handler gets the objects decoded, through the cache.
func (c *compactSide[T]) handler(h Handler[T]) Handler[*watch.Raw] {
	if kr, ok := h.(keyReceiver); ok {
		return KeyHandler[*watch.Raw](kr.onKey)
	}
	return decodingHandler[T]{h: h, c: c}
}

// decodingHandler decodes a compact store's objects for a typed handler.
// A version that does not decode is not delivered: an update whose old
// version did not decode is an add of the new one, since the handler
// never saw the old.
type decodingHandler[T watch.Object] struct {
	h Handler[T]
	c *compactSide[T]
}

func (d decodingHandler[T]) OnAdd(r *watch.Raw, initial bool) {
	if obj, err := d.c.decode(r); err == nil {
		d.h.OnAdd(obj, initial)
	}
}

func (d decodingHandler[T]) OnUpdate(old, cur *watch.Raw) {
	obj, err := d.c.decode(cur)
	if err != nil {
		return
	}
	if old == cur {
		d.h.OnUpdate(obj, obj)
		return
	}
	prev, err := d.c.decode(old)
	if err != nil {
		d.h.OnAdd(obj, false)
		return
	}
	d.h.OnUpdate(prev, obj)
}

func (d decodingHandler[T]) OnDelete(r *watch.Raw, unknown bool) {
	if obj, err := d.c.decode(r); err == nil {
		d.h.OnDelete(obj, unknown)
	}
}

// AddRawHandler registers h on a compact store's records: it receives
// every change as watch.Raws, whose metadata (key, labels, uid,
// resourceVersion, generation) is read without decoding, and calls Decode
// for the old or new object only when it needs one. Delivery is as for
// AddHandler. In StoreTyped it is an error.
func (inf *Informer[T]) AddRawHandler(h Handler[*watch.Raw], opts HandlerOptions) (Registration, error) {
	if inf.compact == nil {
		return nil, errors.New("informer: AddRawHandler needs Store: StoreCompact")
	}
	return inf.compact.raw.AddHandler(h, opts)
}

// Decode decodes a record of a compact store (from RawStore or a raw
// handler) into T, through the same cache readers use: one decode per
// version. In StoreTyped it is an error.
func (inf *Informer[T]) Decode(r *watch.Raw) (T, error) {
	if inf.compact == nil {
		var zero T
		return zero, errors.New("informer: Decode needs Store: StoreCompact")
	}
	return inf.compact.decode(r)
}
