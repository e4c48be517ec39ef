package informer

import (
	"log/slog"
	"runtime"
	"time"

	"github.com/kwatch/kwatch/internal/backoff"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// Defaults for Options' zero fields.
const (
	DefaultPageSize        = 500
	DefaultMinWatchTimeout = 5 * time.Minute
	DefaultIdleTimeout     = 150 * time.Second
)

// ListMode chooses how the informer fetches the initial state.
type ListMode int

const (
	// ListAuto uses streaming lists (watch with sendInitialEvents) and
	// falls back to paginated lists, from the same resourceVersion, for
	// the rest of Run on the first sign that the server does not honour
	// one, even after streaming lists have worked: a server may honour
	// them from resourceVersion "" and not from a resourceVersion (an
	// older or an aggregated API server). The signs: an event a streaming
	// list never sends first, a refusal of the parameters, or two accepted
	// streams in a row that end before their initial-events-end bookmark.
	ListAuto ListMode = iota
	// ListPaged always uses paginated lists.
	ListPaged
	// ListStreaming always uses streaming lists; a server without support
	// is an error that the informer retries with backoff.
	ListStreaming
)

// Options configure an Informer. Client and Resource are required; every
// other zero field takes the default its comment gives. The fields come
// in the order a caller meets them: what to watch, what to keep of it,
// what to ask the server for, then the Tuning of how it is listed,
// watched and stored, whose zero value is the default.
type Options[T watch.Object] struct {
	// Client talks to the server. Its Config decides the encoding: a T
	// with a generated protobuf Unmarshal (k8s.io/api types) is listed and
	// watched in protobuf unless the Config asks for JSON.
	Client   *kube.Client
	Resource kube.Resource
	// Scope narrows the informer to a namespace and selectors; the zero
	// Scope watches every object of Resource. The server judges the
	// selectors: a malformed one fails the list with a 400.
	Scope kube.Scope
	// Logger receives the informer's logs; slog.Default().
	Logger *slog.Logger

	// Transform, if set, sees every object before it enters the store (to
	// drop managedFields, say). It may modify and return its argument. An
	// error drops the object with a logged error and counts it in Stats;
	// so does a panic, as a *store.PanicError (so do those of Key and of
	// an index function, in StoreErrors): the watch goes on.
	Transform func(T) (T, error)
	// DropManagedFields removes metadata.managedFields (server-side
	// apply's bookkeeping, often a third of an object) from every object
	// before it is stored: in StoreCompact from the encoded bytes, in
	// StoreTyped through the object's SetManagedFields before Transform.
	DropManagedFields bool
	// Key names an object in the store; store.MetaKey ("namespace/name").
	// It must depend only on what never changes between versions of an
	// object (namespace, name, uid): a delete finds the stored object by
	// the key of its final state.
	Key store.KeyFunc[T]
	// Indexers are extra store indexes; the namespace index is built in.
	Indexers map[string]store.IndexFunc[T]
	// RawIndexers are extra indexes of a compact store over the objects'
	// metadata (watch.Raw: namespace, name, labels, uid, generation),
	// which cost no decode; Indexers still work and decode each object
	// they index once per version.
	RawIndexers map[string]store.IndexFunc[*watch.Raw]
	// OnApplied, if set, is called with the store key of every change the
	// store applies: a watch event's, and each key a relist or a snapshot
	// restore adds, changes or removes. It runs on the informer's
	// goroutine, in the order of the changes, once the store holds the
	// change and before the next one is applied, with none of the
	// informer's locks held (a handler may hear of the change first). The
	// watch waits for it: it must be quick and must not block. A panic
	// in it is logged and counted in Stats.HandlerPanics, and the watch
	// goes on. A KeyHandler without the handler's queue and goroutine:
	// the manager wakes the reconciles that wait for their own writes
	// with it.
	OnApplied func(key string)

	// Form is what the server sends of each object; watch.FormObject,
	// the object. watch.FormMetadata asks for PartialObjectMetadata: use
	// it with T = *metav1.PartialObjectMetadata or a type holding only
	// metadata. watch.FormTable asks for the server's printed Table, as
	// kubectl get does (watch.AcceptTable): use it with a T that decodes a
	// one-row Table (a list's rows and each watch event's object come as
	// one) and the plain object a server without Tables sends instead. The
	// row's object is the object's PartialObjectMetadata, so keys,
	// resourceVersions and bookmarks work as with FormMetadata.
	// watch.FormTableObject has each row carry its whole object instead:
	// for a printer that also needs the object (kwatch --diff).
	Form watch.Form

	// Tuning is how the informer lists, watches and stores: list mode,
	// page size, backoff, timeouts, resyncs, decoding and the store mode.
	// Its zero value is the default of each.
	Tuning

	// Snapshot keeps a compact store in a file and resumes from it on Run
	// instead of listing (see SnapshotOptions); the compact store only (so
	// not with a Transform or a Table). nil: none.
	Snapshot *SnapshotOptions

	// jsonOnly asks for JSON: a compact store's inner informer of Raw
	// decodes protobuf, but the T it decodes into on read may not.
	jsonOnly bool
}

// Tuning is how an informer lists, watches and stores what its Options
// name: the knobs that change its cost and how it meets failures, not
// what it holds. Each zero field takes the default its comment gives. It
// is embedded in Options, and a controller.Manager takes one per resource
// (ManagerOptions.InformerTuning) for the informers it builds.
type Tuning struct {
	// ListMode picks streaming or paginated lists; ListAuto.
	ListMode ListMode
	// PageSize is the limit of each list page; 500. The real server
	// ignores it for the first list, at RV "0", which it answers whole
	// from its watch cache (list-pods-rv0-limit2.json).
	PageSize int64
	// Backoff shapes the waits after failed attempts: 800 ms doubling to
	// 30 s with jitter. A list that commits or a watch that delivers events
	// starts the next failure from the first wait again.
	Backoff Backoff
	// MinWatchTimeout is the shortest timeoutSeconds asked of the server;
	// each watch asks for a random time between it and twice it, so that
	// many clients do not reconnect together. 5 minutes.
	MinWatchTimeout time.Duration
	// IdleTimeout ends a watch that received no byte (no event, no
	// bookmark) for this long and resumes it: a half-open connection never
	// leaves the cache stale for longer. 150 s, 2.5 times the real server's
	// bookmark interval. Negative disables it.
	IdleTimeout time.Duration
	// ResyncPeriod, when positive, re-delivers every object to handlers
	// that ask for resyncs as OnUpdate(obj, obj).
	ResyncPeriod time.Duration
	// Decoder bounds watch-stream decoding: frame size (16 MiB) and how
	// many frames are decoded at once (2 when the process may use two or
	// more cores: the benchmark harness measured about 10% more events per
	// second than 1 on two cores, for a slightly higher p99 latency; 1 in
	// StoreCompact, whose decoder only scans metadata).
	Decoder watch.DecoderOptions
	// Store chooses how the store keeps objects: as the server encoded
	// them, decoded on read (StoreCompact; see compact.go for what
	// changes), or decoded (StoreTyped). StoreDefault: compact, typed with
	// a Transform or a Table (EffectiveStore). A compact store decodes no
	// event for a handler that needs only keys, and a read pays one
	// decode per object version (shared through DecodeCache).
	Store StoreMode
	// DecodeCache bounds the decoded objects a compact store keeps for
	// its readers and handlers, so that a handler's decode and the
	// reconcile that reads the same version share one, and a List,
	// ByIndex or Snapshot repeated over unchanged objects decodes nothing.
	// 0 sizes the cache by use (decodecache.go): at least
	// DefaultDecodeCache objects, and as many as the largest List, ByIndex
	// or Snapshot read lately. A positive value is a fixed number of
	// objects; a negative one keeps none.
	DecodeCache int
}

// Backoff shapes the waits between failed attempts to list or watch. Each
// zero field takes the default its comment gives.
type Backoff struct {
	// Initial is the first wait; 800 ms. Each failure in a row doubles it.
	Initial time.Duration
	// Max caps the wait; 30 s.
	Max time.Duration
	// ResetAfter starts again from Initial when a failure comes this long
	// after the previous one, even without a proven success; 2 minutes.
	ResetAfter time.Duration
	// Jitter adds up to Jitter times the wait at random, so that clients
	// that failed together do not retry together; 1.0. Negative disables it.
	Jitter float64
}

func (b Backoff) internal() backoff.Options {
	return backoff.Options{Initial: b.Initial, Max: b.Max, ResetAfter: b.ResetAfter, Jitter: b.Jitter}
}

// EffectiveStore is the store mode New gives an informer with o: Store,
// or for StoreDefault the compact store unless a Transform, a Table or a T
// of *watch.Raw needs the typed one. It is the one place that decides.
func (o *Options[T]) EffectiveStore() StoreMode {
	if o.Store != StoreDefault {
		return o.Store
	}
	if o.Transform != nil || o.Form.IsTable() || decodesRaw[T]() {
		return StoreTyped
	}
	return StoreCompact
}

// decodesRaw reports whether T is the compact store's *watch.Raw.
func decodesRaw[T any]() bool {
	_, ok := any(*new(T)).(*watch.Raw)
	return ok
}

func (o *Options[T]) defaults() {
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.MinWatchTimeout <= 0 {
		o.MinWatchTimeout = DefaultMinWatchTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Store = o.EffectiveStore()
	if o.Decoder.Parallelism == 0 && runtime.GOMAXPROCS(0) >= 2 && !decodesRaw[T]() && o.Store != StoreCompact {
		o.Decoder.Parallelism = 2
	}
}
