package controller

import (
	"context"
	"fmt"
	"reflect"

	jsoniter "github.com/json-iterator/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// Reader reads objects of one resource from the manager's shared
// informer. Every read waits for the informer's first sync and hands out
// a deep copy: the caller may change what it gets without corrupting the
// cache (see Cache).
type Reader[T watch.Object] struct {
	inf    *informer.Informer[T]
	res    kube.Resource
	entry  *cacheEntry
	expect *expectations // nil: reads never wait for this process's writes
}

// Cache returns a Reader of res on the manager's shared informer,
// building the informer on first use (Run starts it). A T with a
// DeepCopy() T method (every k8s.io/api type, *unstructured.Unstructured)
// is copied with it; any other T through a JSON round trip, which costs
// about as much as decoding the object.
func Cache[T watch.Object](m *Manager, res kube.TypedResource[T]) (*Reader[T], error) {
	return CacheIn(m, res, kube.Scope{})
}

// CacheIn is Cache for the cache of res in scope (a namespace, selectors).
func CacheIn[T watch.Object](m *Manager, res kube.TypedResource[T], scope kube.Scope) (*Reader[T], error) {
	shared, err := InformerIn(m, res, scope)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	entry := m.caches[m.keyOf(reflect.TypeFor[T](), res.Resource(), scope)]
	m.mu.Unlock()
	return &Reader[T]{inf: shared.inf, res: res.Resource(), entry: entry, expect: m.expect}, nil
}

// Get returns the object key names as one the caller owns and may change,
// or ok false when the cache has none: a copy, or in a compact cache a
// protobuf object no reader has decoded yet, decoded for this caller alone,
// which saves the copy (informer.Informer.GetOwned). It waits for the first
// sync, and, when this process wrote the object through the manager's
// client, until the cache shows that write (ManagerOptions.ExpectationTimeout
// bounds the wait; past it the error is a *NotShownError, which a later
// Get gets at once until the cache shows the write or this process writes
// the object again). err is the context's when it ends first.
//
// A write whose outcome is unknown (its answer was lost) is not waited
// for: the writing key's next reconcile waits for it, reads do not, and
// the cached object returned may be older than the write.
func (r *Reader[T]) Get(ctx context.Context, key Key) (obj T, ok bool, err error) {
	if err := r.wait(ctx); err != nil {
		return obj, false, err
	}
	for round := 0; ; round++ {
		var seen *pendingWrite
		if r.entry != nil {
			if seen, err = r.expect.waitShown(ctx, r.entry, key.String()); err != nil {
				return obj, false, err
			}
		}
		obj, ok, err = r.inf.GetOwned(key.String(), deepCopy[T])
		if err != nil || !ok || !readOlder(seen, obj) {
			return obj, ok, err
		}
		// The cache came to hold an older version than this process's
		// write after waitShown looked (expect_readers.go): look again,
		// a few times; a cache that shows the write and still holds an
		// older object (no stream does that) gets the error.
		if round == maxReadRounds {
			return obj, false, &NotShownError{Write: seen.String(), After: r.expect.timeout}
		}
	}
}

// maxReadRounds bounds Get's second looks: the first finds the cache's
// state past the write.
const maxReadRounds = 4

// ListOptions filter a List. Every selector given must match.
type ListOptions struct {
	// Namespace lists one namespace; "" all that are cached.
	Namespace string
	// LabelSelector, in the API's syntax ("app=web,tier!=db").
	LabelSelector string
	// Selector, if not nil, is a labels.Selector (labels.SelectorFromSet,
	// labels.Parse...).
	Selector labels.Selector
	// MatchSelector, if not nil, is a selector as objects carry it (a
	// ReplicaSet's or Deployment's spec.selector): matchLabels and
	// matchExpressions. An empty one, with neither, matches every object,
	// as in the API; nil is no selector.
	MatchSelector *metav1.LabelSelector
}

// selector is the conjunction of opts' selectors.
func (opts ListOptions) selector() (labels.Selector, error) {
	sel := labels.Everything()
	if opts.LabelSelector != "" {
		s, err := labels.Parse(opts.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("controller: label selector %q: %w", opts.LabelSelector, err)
		}
		sel = s
	}
	var more []labels.Requirement
	if opts.Selector != nil {
		reqs, _ := opts.Selector.Requirements()
		more = append(more, reqs...)
	}
	if opts.MatchSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(opts.MatchSelector)
		if err != nil {
			return nil, fmt.Errorf("controller: ListOptions.MatchSelector: %w", err)
		}
		reqs, _ := s.Requirements()
		more = append(more, reqs...)
	}
	return sel.Add(more...), nil
}

// List returns copies of the cached objects that match opts, in no
// particular order (two calls may differ). From a compact cache the
// labels are matched on each object's stored metadata before anything is
// decoded, so a list by selector decodes (or copies) only what it returns
// (informer.Informer.ListOwned). Sorting would add n log n
// comparisons to every List, about a sixth of the copying's cost at
// 100,000 objects, for the callers that do not need an order; one that
// does sorts the result, for example with slices.SortFunc by namespace
// and name.
func (r *Reader[T]) List(ctx context.Context, opts ListOptions) ([]T, error) {
	if err := r.wait(ctx); err != nil {
		return nil, err
	}
	sel, err := opts.selector()
	if err != nil {
		return nil, err
	}
	index := ""
	if opts.Namespace != "" {
		index = store.NamespaceIndex
	}
	return r.inf.ListOwned(index, opts.Namespace, sel, deepCopy[T])
}

// ByIndex returns copies of the cached objects whose index name (see
// Index; "namespace" is built in) has value.
func (r *Reader[T]) ByIndex(ctx context.Context, name, value string) ([]T, error) {
	if err := r.wait(ctx); err != nil {
		return nil, err
	}
	return r.inf.ListOwned(name, value, nil, deepCopy[T])
}

func (r *Reader[T]) wait(ctx context.Context) error {
	if r.inf.HasSynced() {
		return nil
	}
	if !r.inf.WaitForSync(ctx) {
		return fmt.Errorf("controller: cache of %s not synced: %w", r.res, context.Cause(ctx))
	}
	return nil
}

// deepCopy copies obj so the caller may change it.
func deepCopy[T any](obj T) (T, error) {
	if c, ok := any(obj).(interface{ DeepCopy() T }); ok {
		return c.DeepCopy(), nil
	}
	b, err := jsoniter.ConfigCompatibleWithStandardLibrary.Marshal(obj)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("controller: copying a %T: %w", obj, err)
	}
	var out T
	if err := jsoniter.ConfigCompatibleWithStandardLibrary.Unmarshal(b, &out); err != nil {
		var zero T
		return zero, fmt.Errorf("controller: copying a %T: %w", obj, err)
	}
	return out, nil
}
