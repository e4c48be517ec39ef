package controller

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/fields"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/internal/backoff"
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
// deleted one. Only an object the server does not show within ForScope
// is reconciled without being cached: it is gone, or it is an owner
// outside the scope (its key from Owns), reconciled as in Filter mode and
// never labelled.

// ShardScope is the scope of the primary objects this replica owns in
// Label mode (the label selector LabelKey(ring)=identity, added to
// scope's); scope itself in Filter mode or without sharding. A reconcile
// reads its primary object through CacheIn with it.
func (m *Manager) ShardScope(scope kube.Scope) kube.Scope {
	if m.member == nil || m.opts.Sharding.Mode != shard.Label {
		return scope
	}
	return withSelector(scope, shard.LabelKey(m.opts.Sharding.Ring)+"="+m.member.Identity())
}

// unlabelledScope is the scope of the primary objects nobody labelled yet.
func (m *Manager) unlabelledScope(scope kube.Scope) kube.Scope {
	return withSelector(scope, "!"+shard.LabelKey(m.opts.Sharding.Ring))
}

func withSelector(sc kube.Scope, sel string) kube.Scope {
	if sc.LabelSelector == "" {
		sc.LabelSelector = sel
	} else {
		sc.LabelSelector += "," + sel
	}
	return sc
}

func labelMode(m *Manager) bool { return m.member != nil && m.opts.Sharding.Mode == shard.Label }

// labeler moves primary objects to this replica in Label mode.
type labeler struct {
	key, me    string // the label and this replica's value
	mine       func(key string) bool
	unlabelled func(key string) (rv string, ok bool)
	patch      func(ctx context.Context, k Key, rv string) error
	// read reads k's object live within the controller's ForScope: its
	// labels and resourceVersion, or ok false when the server has none
	// there (deleted, or outside the scope; an object outside it is
	// never relabelled).
	read func(ctx context.Context, k Key) (lbls map[string]string, rv string, ok bool, err error)
	// listOthers lists the keys of objects labelled for other members.
	listOthers func(ctx context.Context) ([]string, error)

	mu     sync.Mutex
	relist relist // guarded by mu
}

// relist decides when a Label-mode replica lists the objects labelled
// for others: once after every barrier it passes (the member's Settles
// count, not the ring's version, which comes back when members leave and
// return), and again with backoff after a list that failed. Its zero
// value lists at the first barrier; it is not safe for concurrent use.
type relist struct {
	listed  uint64           // the Settles of the last list that succeeded
	failed  uint64           // the Settles of the last list that failed
	retryAt time.Time        // when that failed list may run again; zero: none is due
	backoff *backoff.Backoff // delays between failed lists; nil until the first failure
}

// dueAt reports whether a list is due at now, the member having passed
// settles barriers: a barrier not listed yet, unless its list failed
// and its retry is not due.
func (r *relist) dueAt(settles uint64, now time.Time) bool {
	if settles == 0 || settles == r.listed {
		return false
	}
	return settles != r.failed || !now.Before(r.retryAt)
}

// doneAt records the outcome of the list started when the member had
// passed settles barriers.
func (r *relist) doneAt(settles uint64, err error, now time.Time) {
	if err == nil {
		r.listed, r.failed, r.retryAt = settles, 0, time.Time{}
		if r.backoff != nil {
			r.backoff.Reset()
		}
		return
	}
	if r.backoff == nil {
		r.backoff = backoff.New(backoff.Options{})
	}
	r.failed, r.retryAt = settles, now.Add(r.backoff.FailureAt(now))
}

// pending is when a failed list is due again; zero when none is.
func (r *relist) pending() time.Time {
	if r.failed == 0 || r.failed == r.listed {
		return time.Time{}
	}
	return r.retryAt
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
	// The fenced client (fence.go): a relabel is a write of the key's
	// reconcile, refused once this replica may not act on the key.
	objs := client.For(m.writer, cfg.For, client.Options{FieldManager: "kwatch-shard"})
	scope := m.resolve(cfg.ForScope)
	// The server judges the scope (readInScope); a malformed one is
	// refused here, naming it, before any request.
	if err := scope.Validate(); err != nil {
		return nil, nil, fmt.Errorf("controller: ForScope: %w", err)
	}
	// The controller's own selectors too: objects outside its scope are
	// not its to relabel.
	others := withSelector(scope, lk+","+lk+"!="+me)
	l := &labeler{key: lk, me: me,
		mine:       func(k string) bool { _, ok := mine.Store().Get(k); return ok },
		unlabelled: func(k string) (string, bool) { return rvOf(free.Store(), k) },
		patch: func(ctx context.Context, k Key, rv string) error {
			body := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"labels":{%q:%q}}}`, rv, lk, me)
			_, err := objs.Patch(ctx, k.Namespace, k.Name, client.MergePatch, []byte(body), client.PatchOptions{})
			return err
		},
		read: func(ctx context.Context, k Key) (map[string]string, string, bool, error) {
			return readInScope(ctx, objs, scope, k)
		},
		listOthers: func(ctx context.Context) ([]string, error) {
			page, err := objs.List(ctx, others, watch.ListOptions{})
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

// readInScope reads k's object live if it is in scope: ok false when the
// server has no such object there. The scope is the server's to judge,
// not this process's: a list in the key's namespace narrowed to its name
// (metadata.name, which every resource supports and the API server reads
// as one key, as it does a GET) with the scope's label and field
// selectors. So every field selector the server accepts for the
// resource is honoured exactly; evaluating one here would know only
// metadata.name and metadata.namespace, and would have to guess for the
// rest.
func readInScope[P watch.Object](ctx context.Context, objs *client.Client[P], scope kube.Scope, k Key) (map[string]string, string, bool, error) {
	if scope.Namespace != "" && k.Namespace != scope.Namespace {
		return nil, "", false, nil
	}
	fs := "metadata.name=" + fields.EscapeValue(k.Name)
	if scope.FieldSelector != "" {
		fs += "," + scope.FieldSelector
	}
	page, err := objs.List(ctx, kube.Scope{Namespace: k.Namespace, LabelSelector: scope.LabelSelector, FieldSelector: fs}, watch.ListOptions{})
	if err != nil {
		return nil, "", false, err
	}
	for _, o := range page.Items {
		if o.GetName() == k.Name && o.GetNamespace() == k.Namespace {
			return any(o).(labelled).GetLabels(), o.GetResourceVersion(), true, nil
		}
	}
	return nil, "", false, nil
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
	lbls, rv, ok, err := l.read(ctx, k)
	switch {
	case err != nil:
		return false, err
	case !ok:
		// Deleted, to be reconciled as such, or not the controller's
		// object (an owner outside ForScope, its key from Owns): as in
		// Filter mode, reconciled uncached. Labelling it would wait for
		// an event that the scoped informers never deliver.
		return true, nil
	case lbls[l.key] == l.me:
		return false, nil // labelled already; its cache event is on the way
	}
	return false, l.patch(ctx, k, rv)
}

// gainedElsewhere lists, once per barrier the member passes, the
// objects labelled for other members and returns the keys this replica
// now owns: after a handover, and a dead member's objects. Its cache
// does not hold them, so a scan of the cache cannot find them. A list
// that fails is retried with backoff (retryAt says when).
func (l *labeler) gainedElsewhere(member *shard.Member) []Key {
	settles := member.Status().Settles
	l.mu.Lock()
	due := l.relist.dueAt(settles, time.Now())
	l.mu.Unlock()
	if !due {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	keys, err := l.listOthers(ctx)
	l.mu.Lock()
	l.relist.doneAt(settles, err, time.Now())
	l.mu.Unlock()
	if err != nil {
		return nil
	}
	var out []Key
	for _, k := range keys {
		if member.Owns(k) {
			out = append(out, ParseKey(k))
		}
	}
	return out
}

// retryAt is when a failed list of the others' objects is due again;
// zero when none is.
func (l *labeler) retryAt() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.relist.pending()
}
