package controller

import (
	"cmp"
	"context"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// The owner index.
//
// An Owns source asks for an index of the owned objects by the uid of
// their controller owner (the ownerReference with controller: true), so
// that Reader.Owned finds the objects an owner controls without scanning
// its namespace: the lookup controller-runtime users write a field indexer
// for. In a typed store the index reads the decoded object's owner
// references; in a compact store it is a RawIndexer that reads them from
// the metadata of the encoded object (watch.Raw.GetOwnerReferences), so no
// object is decoded into T for it. Expectations (which write a key waits
// for) can look up an owner's objects through the same index.

// OwnerIndex is the name of the owner index (Reader.ByIndex(ctx,
// OwnerIndex, uid) is Reader.Owned by uid). Its values are controller
// owners' uids.
const OwnerIndex = "controller-owner-uid"

// ownedObject is an object with owner references (metav1.ObjectMeta and
// watch.Raw give it).
type ownedObject = ownerer

// controllerUID is the uid of obj's controller owner, "" if none.
func controllerUID(refs []metav1.OwnerReference) types.UID {
	for _, ref := range refs {
		if ref.Controller != nil && *ref.Controller {
			return ref.UID
		}
	}
	return ""
}

// ownerIndexFunc indexes a T by its controller owner's uid.
func ownerIndexFunc[T any](obj T) ([]string, error) {
	o, ok := any(obj).(ownedObject)
	if !ok {
		return nil, nil
	}
	if uid := controllerUID(o.GetOwnerReferences()); uid != "" {
		return []string{string(uid)}, nil
	}
	return nil, nil
}

// requestOwnerIndex asks for the owner index on the cache of res as T in
// scope. The cache must not be built yet for the index to be added (an
// informer's indexes are fixed when it is built); if it is, Reader.Owned
// falls back to scanning the owner's namespace, and that is logged once
// here so that the fix (create the controller before reading the cache)
// is found.
func requestOwnerIndex[T watch.Object](m *Manager, res kube.Resource, scope kube.Scope) error {
	key := m.keyOf(reflect.TypeFor[T](), res, scope)
	m.mu.Lock()
	e, built := m.caches[key]
	ix, _ := m.indexers[key].(map[string]store.IndexFunc[T])
	m.mu.Unlock()
	switch {
	case built:
		inf := e.inf.(*informer.Informer[T])
		if !slices.Contains(inf.Store().IndexNames(), OwnerIndex) {
			m.log.Warn("the cache of an owned resource was built before its controller: Reader.Owned scans namespaces instead of using the owner index; create controllers before reading their caches",
				"resource", res.String())
		}
		return nil
	case ix[OwnerIndex] != nil:
		return nil // another controller owns the same resource
	}
	return indexIn(m, res, scope, OwnerIndex, ownerIndexFunc[T])
}

// ownerIndexForStore moves the owner index of opts to RawIndexers in a
// compact store, where it reads metadata without decoding T. InformerIn
// calls it once opts.Store is known.
func ownerIndexForStore[T watch.Object](opts *informer.Options[T]) {
	if opts.EffectiveStore() != informer.StoreCompact || opts.Indexers[OwnerIndex] == nil {
		return
	}
	ix := make(map[string]store.IndexFunc[T], len(opts.Indexers))
	for name, fn := range opts.Indexers {
		if name != OwnerIndex {
			ix[name] = fn
		}
	}
	opts.Indexers = ix
	raw := make(map[string]store.IndexFunc[*watch.Raw], len(opts.RawIndexers)+1)
	for name, fn := range opts.RawIndexers {
		raw[name] = fn
	}
	raw[OwnerIndex] = ownerIndexFunc[*watch.Raw]
	opts.RawIndexers = raw
}

// ownerRef is what Owned needs of an owner: its uid and namespace.
type ownerRef interface {
	GetNamespace() string
	GetUID() types.UID
}

// Owned returns copies of the cached objects whose controller owner (the
// ownerReference with controller: true) is owner, matched by uid: an
// object of an earlier owner of the same name is not returned. It uses
// the owner index when the cache has it, which every cache an Owns source
// reads has when the controller was created before the cache's first
// use; otherwise it scans owner's namespace (all cached objects for a
// cluster-scoped owner). It waits for the first sync like Get.
func (r *Reader[T]) Owned(ctx context.Context, owner ownerRef) ([]T, error) {
	uid := owner.GetUID()
	if uid == "" {
		return nil, nil // an owner not yet created owns nothing
	}
	if err := r.wait(ctx); err != nil {
		return nil, err
	}
	index, value := "", ""
	switch {
	case slices.Contains(r.inf.Store().IndexNames(), OwnerIndex):
		index, value = OwnerIndex, string(uid)
	case owner.GetNamespace() != "":
		index, value = store.NamespaceIndex, owner.GetNamespace()
	}
	items, err := r.inf.ListOwned(index, value, nil, deepCopy[T])
	if err != nil {
		return nil, err
	}
	out := items[:0]
	for _, obj := range items {
		if o, ok := any(obj).(ownedObject); ok && controllerUID(o.GetOwnerReferences()) == uid {
			out = append(out, obj) // not a scan's object of another owner
		}
	}
	slices.SortFunc(out, func(a, b T) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	return out, nil
}
