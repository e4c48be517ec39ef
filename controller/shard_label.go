package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/shard"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// Label mode (shard.Label): a replica caches the primary objects labelled
// with its identity and the unlabelled ones, not the others'. Before the
// first reconcile of a key on a replica, the object must be in its
// labelled cache: labeler.prepare labels it (an unlabelled object, or one
// labelled for another member, read live) and waits for the label to
// reach the cache, so a reconcile never takes a moved object for a
// deleted one. Only an object the server answers 404 for is reconciled
// without being cached: it is gone.

// ShardScope is the scope of the primary objects this replica owns in
// Label mode (the label selector LabelKey(ring)=identity, added to
// scope's); scope itself in Filter mode or without sharding. A reconcile
// reads its primary object through CacheIn with it.
func (m *Manager) ShardScope(scope Scope) Scope {
	if m.member == nil || m.opts.Sharding.Mode != shard.Label {
		return scope
	}
	return withSelector(scope, shard.LabelKey(m.opts.Sharding.Ring)+"="+m.member.Identity())
}

// unlabelledScope is the scope of the primary objects nobody labelled yet.
func (m *Manager) unlabelledScope(scope Scope) Scope {
	return withSelector(scope, "!"+shard.LabelKey(m.opts.Sharding.Ring))
}

func withSelector(sc Scope, sel string) Scope {
	if sc.LabelSelector == "" {
		sc.LabelSelector = sel
	} else {
		sc.LabelSelector += "," + sel
	}
	return sc
}

func labelMode(m *Manager) bool { return m.member != nil && m.opts.Sharding.Mode == shard.Label }

// primarySources are the sources of a controller's own objects: its For
// resource, or in Label mode the objects labelled for this replica and
// the unlabelled ones.
func primarySources[P watch.Object](m *Manager, cfg Config[P]) []Source {
	if !labelMode(m) {
		return []Source{forSource(cfg.For, cfg.ForScope, cfg.Predicates)}
	}
	return []Source{forSource(cfg.For, m.ShardScope(cfg.ForScope), cfg.Predicates),
		forSource(cfg.For, m.unlabelledScope(cfg.ForScope), cfg.Predicates)}
}

// labeler moves primary objects to this replica in Label mode.
type labeler struct {
	key, me    string // the label and this replica's value
	mine       func(key string) bool
	unlabelled func(key string) (rv string, ok bool)
	patch      func(ctx context.Context, k Key, rv string) error
	get        func(ctx context.Context, k Key) (lbls map[string]string, rv string, err error)
	// inScope reports whether labels match the controller's own
	// selector (ForScope); an object outside it is never relabelled.
	inScope func(lbls map[string]string) bool
	// listOthers lists the keys of objects labelled for other members.
	listOthers func(ctx context.Context) ([]string, error)

	mu      sync.Mutex
	settled string // the settled ring at the last listOthers; guarded by mu
}

// labelled is an object with labels (metav1.ObjectMeta gives it).
type labelled interface{ GetLabels() map[string]string }

func newLabeler[P watch.Object](m *Manager, cfg Config[P]) (*labeler, func() []string, error) {
	var zero P
	if _, ok := any(zero).(labelled); !ok {
		return nil, nil, fmt.Errorf("controller: Label mode needs GetLabels on %T", zero)
	}
	mine, err := InformerIn[P](m, cfg.For, m.ShardScope(cfg.ForScope))
	if err != nil {
		return nil, nil, err
	}
	free, err := InformerIn[P](m, cfg.For, m.unlabelledScope(cfg.ForScope))
	if err != nil {
		return nil, nil, err
	}
	lk, me := shard.LabelKey(m.opts.Sharding.Ring), m.member.Identity()
	objs := client.For[P](m.c, cfg.For, client.Options{FieldManager: "kwatch-shard"})
	scope := m.resolve(cfg.ForScope)
	ns := scope.Namespace
	sel, err := labels.Parse(scope.LabelSelector)
	if err != nil {
		return nil, nil, fmt.Errorf("controller: ForScope label selector %q: %w", scope.LabelSelector, err)
	}
	others := withSelector(Scope{LabelSelector: scope.LabelSelector}, lk+","+lk+"!="+me).LabelSelector
	l := &labeler{key: lk, me: me,
		mine:       func(k string) bool { _, ok := mine.Store().Get(k); return ok },
		unlabelled: func(k string) (string, bool) { return rvOf(free.Store(), k) },
		patch: func(ctx context.Context, k Key, rv string) error {
			body := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"labels":{%q:%q}}}`, rv, lk, me)
			_, err := objs.Patch(ctx, k.Namespace, k.Name, client.MergePatch, []byte(body), client.PatchOptions{})
			return err
		},
		get: func(ctx context.Context, k Key) (map[string]string, string, error) {
			obj, err := objs.Get(ctx, k.Namespace, k.Name, client.GetOptions{})
			if err != nil {
				return nil, "", err
			}
			return any(obj).(labelled).GetLabels(), obj.GetResourceVersion(), nil
		},
		inScope: func(l map[string]string) bool { return sel.Matches(labels.Set(l)) },
		listOthers: func(ctx context.Context) ([]string, error) {
			// The controller's own selector too: objects outside its scope
			// are not its to relabel.
			page, err := objs.List(ctx, ns, watch.ListOptions{LabelSelector: others, FieldSelector: scope.FieldSelector})
			if err != nil {
				return nil, err
			}
			out := make([]string, 0, len(page.Items))
			for _, o := range page.Items {
				out = append(out, KeyOf(o).String())
			}
			return out, nil
		},
	}
	keys := func() []string { return append(mine.Store().ListKeys(), free.Store().ListKeys()...) }
	return l, keys, nil
}

func rvOf[P watch.Object](v store.View[P], k string) (string, bool) {
	obj, ok := v.Get(k)
	if !ok {
		return "", false
	}
	return obj.GetResourceVersion(), true
}

// prepare reports whether key's reconcile may run now on this replica,
// which owns it: its object is in the labelled cache, or is gone. Else
// it labels the object for this replica (guarded by the resourceVersion
// it read) and returns false; the label's arrival enqueues the key again.
func (l *labeler) prepare(ctx context.Context, k Key) (bool, error) {
	s := k.String()
	if l.mine(s) {
		return true, nil
	}
	if rv, ok := l.unlabelled(s); ok {
		return false, l.patch(ctx, k, rv)
	}
	lbls, rv, err := l.get(ctx, k)
	switch {
	case kube.IsNotFound(err):
		return true, nil // deleted: reconcile it as such
	case err != nil:
		return false, err
	case !l.inScope(lbls):
		return true, nil // not the controller's object (an owner outside ForScope): as in Filter mode, not cached
	case lbls[l.key] == l.me:
		return false, nil // labelled already; its cache event is on the way
	}
	return false, l.patch(ctx, k, rv)
}

// gainedElsewhere lists, once per newly settled ring, the objects
// labelled for other members and returns the keys this replica now
// owns: after a handover, and a dead member's objects. Its cache does
// not hold them, so a scan of the cache cannot find them.
func (l *labeler) gainedElsewhere(member *shard.Member) []Key {
	settled := member.Status().Settled
	l.mu.Lock()
	same := settled == "" || settled == l.settled
	l.mu.Unlock()
	if same {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	keys, err := l.listOthers(ctx)
	if err != nil {
		return nil // the next scan lists again
	}
	l.mu.Lock()
	l.settled = settled
	l.mu.Unlock()
	var out []Key
	for _, k := range keys {
		if member.Owns(k) {
			out = append(out, ParseKey(k))
		}
	}
	return out
}
