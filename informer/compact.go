package informer

import (
	"bytes"
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
	// StoreDefault, the zero value, is StoreCompact, except for what only
	// the typed store can do: with a Transform or a Table (both work on
	// decoded objects), or for T = *watch.Raw (already the compact form),
	// it is StoreTyped. Options.EffectiveStore says which one applies.
	StoreDefault StoreMode = iota
	// StoreCompact keeps each object as the server encoded it (protobuf
	// where T decodes protobuf and the client does not ask for JSON, JSON
	// otherwise) in one pointer-free allocation beside its metadata
	// (watch.Raw), and decodes it into T when a reader or handler asks.
	//
	// What changes against StoreTyped:
	//   - Memory: about the encoded size per object, which the garbage
	//     collector marks without scanning; no decode on arrival.
	//   - Reads: Store().Get, List, Snapshot and ByIndex decode what is not
	//     in the decode cache (Options.DecodeCache), one decode per version
	//     shared by readers and handlers; the cache grows to the largest
	//     batch read lately, so a repeated List of unchanged objects decodes
	//     nothing, and holds, while it does, the decoded objects besides the
	//     encoded ones. Keys (ListKeys, IndexKeys) never decode.
	//   - Handlers: a KeyHandler never decodes; a raw handler (AddRawHandler)
	//     gets old and new metadata at once and decodes (Decode) only the
	//     object it asks for; any other handler decodes the objects it is
	//     given, an update's old one too unless it was added with
	//     HandlerOptions.NoOld. All decodes go through the cache a
	//     reconcile's Get uses.
	//   - Indexes: the namespace index and RawIndexers read metadata only;
	//     Indexers and a custom Key decode each object version they see.
	//   - An object that does not decode into T is found on read: Get
	//     reports it absent, and the failure is counted
	//     (Stats.DecodeErrors) and shown as a refusal in Health. A handler
	//     is not given a version that does not decode and keeps the last
	//     one it was given: its next OnUpdate starts from that one, and a
	//     delete always reaches it, with the final state if that decodes,
	//     else with the last version it was given and finalStateUnknown
	//     set. In StoreTyped such an object is refused on arrival.
	//   - Transform and Table are not available (New returns an error when
	//     StoreCompact is asked for explicitly; StoreDefault picks
	//     StoreTyped for them): both work on decoded objects.
	//   - Aliasing is as in StoreTyped: an object returned by a read or
	//     given to a handler is shared (with the decode cache, other readers
	//     and handlers) and must not be modified; it is never reused or
	//     changed by the informer, so a handler or reader may keep it.
	StoreCompact
	// StoreTyped keeps each object decoded into T: decoded once on
	// arrival, so every read is free and Transform and Table work; it costs
	// the decoded size per object and a decode of every event.
	StoreTyped
)

// String returns "default", "typed" or "compact".
func (m StoreMode) String() string {
	switch m {
	case StoreDefault:
		return "default"
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
	raw   *Informer[*watch.Raw]
	codec *watch.RawCodec[T]
	cache *decodeCache[T]
	key   store.KeyFunc[T] // nil: the Raw's own metadata key
	// decoders counts the handlers that may be given a replaced version:
	// as an update's old object, or, Ordered, as a change not reached yet.
	// While there is one, a replaced version's decode stays cached until
	// evicted.
	decoders atomic.Int64
	decodes  atomic.Int64
	errs     atomic.Int64
}

// newCompact returns the compact side of an informer with opts.
func newCompact[T watch.Object](opts Options[T]) (*compactSide[T], error) {
	switch {
	case opts.Transform != nil:
		return nil, errors.New("informer: Transform needs Store: StoreTyped (it works on decoded objects)")
	case opts.Form.IsTable():
		return nil, fmt.Errorf("informer: Form %v needs Store: StoreTyped", opts.Form)
	}
	c := &compactSide[T]{codec: watch.NewRawCodec[T](), cache: newDecodeCache[T](opts.DecodeCache), key: opts.Key}
	// The inner informer of Raw is typed (its objects are the encoded
	// ones); the decode cache is this side's.
	tuning := opts.Tuning
	tuning.Store, tuning.DecodeCache = StoreDefault, 0
	rawOpts := Options[*watch.Raw]{
		Client: opts.Client, Resource: opts.Resource, Scope: opts.Scope,
		Form: opts.Form, Tuning: tuning, Logger: opts.Logger, OnApplied: opts.OnApplied,
		jsonOnly:  !watch.DecodesProtobuf[T](),
		Transform: rawTransform(opts.DropManagedFields),
		Indexers:  make(map[string]store.IndexFunc[*watch.Raw]),
	}
	if opts.Key != nil {
		rawOpts.Key = func(r *watch.Raw) (string, error) {
			obj, err := c.decodeHeld(r)
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
			obj, err := c.decodeHeld(r)
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
	raw.replaced = c.replaced
	if opts.Snapshot != nil {
		if raw.snap, err = newSnapshotter(raw, *opts.Snapshot, snapshotEncoding(rawOpts)); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// replaced keeps the decode cache to what readers can still ask for (see
// Informer.replaced): a relist's unchanged copy takes over the cached
// decode, a replaced or deleted version is dropped, or only demoted while
// a decoding handler may still be given it.
func (c *compactSide[T]) replaced(old, cur *watch.Raw, gone bool) {
	switch {
	case !gone && old != cur && old.Protobuf() == cur.Protobuf() && bytes.Equal(old.Body(), cur.Body()):
		c.cache.move(old, cur)
	case c.decoders.Load() == 0:
		c.cache.drop(old)
	default:
		c.cache.demote(old)
	}
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
	if o.Form == watch.FormMetadata {
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
	return c.decodeLogging(r, c.raw.opts.Logger.Error)
}

// decodeHeld is decode for the store's Key and Indexers, which run with
// the inner informer's distMu held: a failure's log waits for its release
// (see heldLogs).
func (c *compactSide[T]) decodeHeld(r *watch.Raw) (T, error) {
	return c.decodeLogging(r, c.raw.held.add)
}

// decodeLogging is decode, which logs a failure with logError.
func (c *compactSide[T]) decodeLogging(r *watch.Raw, logError func(msg string, args ...any)) (T, error) {
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
		logError("informer could not decode a stored object; readers do not see it",
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

// handler adapts h, added with opts, to the Raw informer: a KeyHandler
// gets keys as they are; any other handler gets the objects decoded,
// through the cache, the old object of an update only without
// HandlerOptions.NoOld.
func (c *compactSide[T]) handler(h Handler[T], opts HandlerOptions) Handler[*watch.Raw] {
	if kc, ok := h.(keyChangeReceiver); ok {
		return KeyChangeHandler[*watch.Raw](kc.onKeyChange)
	}
	if kr, ok := h.(keyReceiver); ok {
		return KeyHandler[*watch.Raw](kr.onKey)
	}
	if !opts.NoOld || opts.Delivery == Ordered {
		// An Ordered handler is also given replaced versions as the new
		// object of a change it has not reached yet.
		c.decoders.Add(1)
	}
	return &decodingHandler[T]{h: h, c: c, noOld: opts.NoOld, given: map[string]*watch.Raw{}}
}

// decodingHandler decodes a compact store's objects for a typed handler,
// one per registration. A version that does not decode is not given to
// the handler, which keeps the last version it was given:
//   - an update whose new version does not decode is not delivered;
//   - the next version that decodes comes as OnUpdate from the last
//     version given (OnAdd when the handler was given none);
//   - a delete is always delivered to a handler that was given the
//     object: with the final state when it decodes, else with the last
//     version given and finalStateUnknown set (it is not the state at
//     deletion). A typed handler never keeps an object the server deleted.
//
// It relies on decoding being a function of the bytes: a version that does
// not decode now did not when it was delivered, and one that decodes was
// given to the handler. So an update's old version, the one delivered
// last, was given unless given says otherwise, and with noOld it need not
// be decoded to know.
type decodingHandler[T watch.Object] struct {
	h     Handler[T]
	c     *compactSide[T]
	noOld bool // updates come with the zero T as old (HandlerOptions.NoOld)
	// given holds, for each key whose newest delivered version did not
	// decode, the last version the handler was given, or nil when it was
	// given none. Keys whose newest version decoded are not in it, so it
	// holds at most the objects that do not decode. The informer calls a
	// handler from one goroutine at a time (Handler), so it needs no lock.
	given map[string]*watch.Raw
}

// onChange is how the informer delivers to it (see deliver): with the key
// and, for a delete, the version the handler last saw.
func (d *decodingHandler[T]) onChange(p pending[*watch.Raw]) {
	switch {
	case p.curOK:
		d.upsert(p)
	case p.oldOK:
		d.remove(p)
	}
}

func (d *decodingHandler[T]) upsert(p pending[*watch.Raw]) {
	obj, err := d.c.decode(p.cur)
	if err != nil {
		if _, held := d.given[p.key]; !held {
			d.given[p.key] = d.lastDecoded(p)
		}
		return
	}
	prev, ok := d.lastGiven(p, !d.noOld)
	delete(d.given, p.key)
	if !ok {
		d.h.OnAdd(obj, p.initial)
		return
	}
	if rh, ok := d.h.(RelistUpdater[T]); ok && p.relisted {
		rh.OnRelistUpdate(prev, obj)
		return
	}
	d.h.OnUpdate(prev, obj)
}

// lastDecoded is p's old version if it decodes (the handler was given
// it), else nil.
func (d *decodingHandler[T]) lastDecoded(p pending[*watch.Raw]) *watch.Raw {
	if !p.oldOK {
		return nil
	}
	if _, err := d.c.decode(p.old); err != nil {
		return nil
	}
	return p.old
}

func (d *decodingHandler[T]) remove(p pending[*watch.Raw]) {
	if _, ok := d.lastGiven(p, false); !ok {
		// The handler was never given the object: nothing to take back.
		delete(d.given, p.key)
		return
	}
	if obj, err := d.c.decode(p.cur); err == nil {
		delete(d.given, p.key)
		d.h.OnDelete(obj, p.unknown)
		return
	}
	last, ok := d.lastGiven(p, true)
	delete(d.given, p.key)
	if ok {
		d.h.OnDelete(last, true)
	}
}

// lastGiven reports whether the handler was given a version of p's object
// and returns it decoded when decoded is set (else the zero T).
func (d *decodingHandler[T]) lastGiven(p pending[*watch.Raw], decoded bool) (T, bool) {
	var zero T
	r, held := d.given[p.key]
	switch {
	case !held && !p.oldOK, held && r == nil:
		return zero, false
	case !held:
		r = p.old
	}
	if !decoded {
		return zero, true
	}
	obj, err := d.c.decode(r)
	return obj, err == nil
}

// The Handler methods serve a caller that uses it directly; the informer
// calls onChange. They key objects by namespace/name.

func (d *decodingHandler[T]) OnAdd(r *watch.Raw, initial bool) {
	d.onChange(pending[*watch.Raw]{key: rawKey(r), cur: r, curOK: true, initial: initial})
}

func (d *decodingHandler[T]) OnUpdate(old, cur *watch.Raw) {
	d.onChange(pending[*watch.Raw]{key: rawKey(cur), old: old, oldOK: true, cur: cur, curOK: true})
}

func (d *decodingHandler[T]) OnDelete(r *watch.Raw, unknown bool) {
	d.onChange(pending[*watch.Raw]{key: rawKey(r), old: r, oldOK: true, cur: r, unknown: unknown})
}

func rawKey(r *watch.Raw) string {
	k, _ := store.MetaKey(r)
	return k
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
	inf.compact.decoders.Add(1) // it may Decode an update's old object
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
