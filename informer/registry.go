package informer

import (
	"context"
	"reflect"
	"sync"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// Registry shares one informer per (client, object type, resource,
// namespace, selectors, metadata-only) among many consumers, so that ten controllers
// watching pods open one watch and hold one cache. Informers are started by
// the Registry's Run, including those asked for after Run began, and are
// stopped when their last consumer releases them. The zero value is ready
// to use; a Registry is safe for concurrent use.
type Registry struct {
	mu      sync.Mutex
	entries map[registryKey]*registryEntry // guarded by mu
	ctx     context.Context                // Run's context; nil when not running
	wg      sync.WaitGroup
}

type registryKey struct {
	// client is the connection: two clusters, or two identities on one,
	// never share a cache.
	client        *kube.Client
	typ           reflect.Type
	resource      string
	namespace     string
	labelSelector string
	fieldSelector string
	metadataOnly  bool
	table         bool
}

type registryEntry struct {
	inf    interface{ Run(context.Context) error }
	refs   int
	cancel context.CancelFunc // nil until started
}

// Shared returns the registry's informer for opts, building it on first
// use. Only the identity fields of opts (client, resource, namespace,
// selectors, metadata-only, and T) choose the informer; the first caller's other
// options (transform, indexers, timeouts) are the ones used. Call release
// when done; the informer stops after its last release.
func Shared[T watch.Object](r *Registry, opts Options[T]) (inf *Informer[T], release func(), err error) {
	key := registryKey{
		client: opts.Client, typ: reflect.TypeFor[T](), resource: opts.Resource.GroupVersion() + "/" + opts.Resource.Resource,
		namespace: opts.Namespace, labelSelector: opts.LabelSelector, fieldSelector: opts.FieldSelector,
		metadataOnly: opts.MetadataOnly, table: opts.Table,
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entries == nil {
		r.entries = map[registryKey]*registryEntry{}
	}
	e, ok := r.entries[key]
	if !ok {
		created, err := New(opts)
		if err != nil {
			return nil, nil, err
		}
		e = &registryEntry{inf: created}
		r.entries[key] = e
		if r.ctx != nil {
			r.startLocked(e)
		}
	}
	e.refs++
	var once sync.Once
	release = func() { once.Do(func() { r.release(key, e) }) }
	return e.inf.(*Informer[T]), release, nil
}

func (r *Registry) release(key registryKey, e *registryEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.refs--
	if e.refs > 0 {
		return
	}
	if e.cancel != nil {
		e.cancel()
	}
	if r.entries[key] == e {
		delete(r.entries, key)
	}
}

func (r *Registry) startLocked(e *registryEntry) {
	ctx, cancel := context.WithCancel(r.ctx)
	e.cancel = cancel
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		_ = e.inf.Run(ctx)
	}()
}

// Run runs every shared informer, present and future, until ctx is done,
// then waits for all of them to stop.
func (r *Registry) Run(ctx context.Context) error {
	r.mu.Lock()
	if r.ctx != nil {
		r.mu.Unlock()
		return ErrAlreadyRunning
	}
	r.ctx = ctx
	for _, e := range r.entries {
		r.startLocked(e)
	}
	r.mu.Unlock()
	<-ctx.Done()
	r.mu.Lock()
	r.ctx = nil
	r.mu.Unlock()
	r.wg.Wait()
	return nil
}
