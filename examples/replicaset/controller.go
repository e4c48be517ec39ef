// Package replicaset is a ReplicaSet controller built on kwatch's
// controller layer, without client-go: it keeps spec.replicas pods with
// the template's labels and spec, owned by the ReplicaSet (a controller
// ownerReference), deletes the surplus, writes status.replicas,
// readyReplicas, availableReplicas and observedGeneration through the
// status subresource, records SuccessfulCreate and SuccessfulDelete
// Events as the real controller does, and, standing in for kube-controller-manager's
// garbage collector, deletes the pods of a ReplicaSet that is gone.
//
// Template changes apply to pods created afterwards, as with the real
// ReplicaSet controller; existing pods are left alone.
package replicaset

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/events"
	"github.com/kwatch/kwatch/kube"
)

// Setup adds the controller to mgr.
func Setup(mgr *controller.Manager, workers int) error {
	rsCache, err := controller.Cache[*ReplicaSet](mgr, kube.ReplicaSets)
	if err != nil {
		return err
	}
	podCache, err := controller.Cache[*Pod](mgr, kube.Pods)
	if err != nil {
		return err
	}
	rec, err := mgr.Recorder("replicaset-controller")
	if err != nil {
		return err
	}
	r := &reconciler{rs: rsCache, pods: podCache, events: rec,
		rsClient:  client.For[*ReplicaSet](mgr.Client(), kube.ReplicaSets, client.Options{FieldManager: "replicaset-controller"}),
		podClient: client.For[*Pod](mgr.Client(), kube.Pods, client.Options{FieldManager: "replicaset-controller"}),
		pending:   map[controller.Key]*expectation{}}
	_, err = controller.New(mgr, controller.Config[*ReplicaSet]{
		Name:      "replicaset",
		For:       kube.ReplicaSets,
		Owns:      []controller.Source{controller.Owns[*Pod](kube.Pods)},
		Reconcile: r.reconcile,
		Workers:   workers,
	})
	return err
}

type reconciler struct {
	rs        *controller.Reader[*ReplicaSet]
	pods      *controller.Reader[*Pod]
	rsClient  *client.Resource[*ReplicaSet]
	podClient *client.Resource[*Pod]
	events    *events.Recorder

	mu      sync.Mutex
	pending map[controller.Key]*expectation // writes the cache has not shown yet
}

// expectation is what a ReplicaSet's last reconcile wrote and the pod
// cache must show before the next one counts pods: without it a reconcile
// running on a cache that lags its own creates would create again.
type expectation struct {
	created, deleted map[string]bool
	until            time.Time // give up waiting then (a lost event)
}

// expectTimeout bounds the wait for the cache to show the controller's writes.
const expectTimeout = time.Minute

func (r *reconciler) reconcile(ctx context.Context, key controller.Key) (controller.Result, error) {
	rs, ok, err := r.rs.Get(ctx, key)
	if err != nil {
		return controller.Result{}, err
	}
	owned, err := r.ownedPods(ctx, key, rs, ok)
	if err != nil {
		return controller.Result{}, err
	}
	if !ok {
		return controller.Result{}, r.deleteAll(ctx, owned) // the garbage collector's part
	}
	if r.waiting(key, owned) {
		return controller.Result{RequeueAfter: time.Second}, nil
	}
	if err := r.scale(ctx, key, rs, owned); err != nil {
		return controller.Result{}, err
	}
	return controller.Result{}, r.writeStatus(ctx, rs, owned)
}

// ownedPods lists the pods rs controls (by uid when rs exists, by name
// when it is gone), without those being deleted.
func (r *reconciler) ownedPods(ctx context.Context, key controller.Key, rs *ReplicaSet, exists bool) ([]*Pod, error) {
	pods, err := r.pods.List(ctx, controller.ListOptions{Namespace: key.Namespace})
	if err != nil {
		return nil, err
	}
	var out []*Pod
	for _, p := range pods {
		ref := metav1.GetControllerOfNoCopy(p)
		if ref == nil || ref.Kind != "ReplicaSet" || ref.Name != key.Name || p.DeletionTimestamp != nil {
			continue
		}
		if exists && ref.UID != rs.UID {
			continue // a pod of an earlier ReplicaSet of the same name
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *Pod) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// waiting reports whether the cache has yet to show the last writes.
func (r *reconciler) waiting(key controller.Key, owned []*Pod) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.pending[key]
	if e == nil {
		return false
	}
	for _, p := range owned {
		delete(e.created, p.Name)
	}
	for name := range e.deleted {
		if !slices.ContainsFunc(owned, func(p *Pod) bool { return p.Name == name }) {
			delete(e.deleted, name)
		}
	}
	if len(e.created)+len(e.deleted) == 0 || time.Now().After(e.until) {
		delete(r.pending, key)
		return false
	}
	return true
}

// scale creates or deletes pods to reach spec.replicas.
func (r *reconciler) scale(ctx context.Context, key controller.Key, rs *ReplicaSet, owned []*Pod) error {
	want := 1
	if rs.Spec.Replicas != nil {
		want = int(*rs.Spec.Replicas)
	}
	e := &expectation{created: map[string]bool{}, deleted: map[string]bool{}, until: time.Now().Add(expectTimeout)}
	defer r.expect(key, e)
	for i := len(owned); i < want; i++ {
		p, err := r.podClient.Create(ctx, newPod(rs), client.CreateOptions{})
		if err != nil {
			r.events.Eventf(events.Ref(kube.ReplicaSets, rs), events.TypeWarning, "FailedCreate", "Error creating: %v", err)
			return fmt.Errorf("creating a pod for %s: %w", key, err)
		}
		e.created[p.Name] = true
		r.events.Eventf(events.Ref(kube.ReplicaSets, rs), events.TypeNormal, "SuccessfulCreate", "Created pod: %s", p.Name)
	}
	for _, p := range owned[min(want, len(owned)):] {
		err := r.podClient.Delete(ctx, p.Namespace, p.Name, client.DeleteOptions{Preconditions: client.Preconditions{UID: string(p.UID)}})
		if err != nil && !kube.IsNotFound(err) {
			return fmt.Errorf("deleting pod %s: %w", p.Name, err)
		}
		e.deleted[p.Name] = true
		r.events.Eventf(events.Ref(kube.ReplicaSets, rs), events.TypeNormal, "SuccessfulDelete", "Deleted pod: %s", p.Name)
	}
	return nil
}

func (r *reconciler) expect(key controller.Key, e *expectation) {
	if len(e.created)+len(e.deleted) == 0 {
		return
	}
	r.mu.Lock()
	r.pending[key] = e
	r.mu.Unlock()
}

// newPod is a pod of rs's template, controlled by rs.
func newPod(rs *ReplicaSet) *Pod {
	yes := true
	p := &Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: rs.Namespace, GenerateName: rs.Name + "-",
		Labels: rs.Spec.Template.Metadata.Labels, Annotations: rs.Spec.Template.Metadata.Annotations,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name,
			UID: rs.UID, Controller: &yes, BlockOwnerDeletion: &yes}},
	}, Spec: rs.Spec.Template.Spec}
	return p
}

// writeStatus patches the status subresource when it changed.
func (r *reconciler) writeStatus(ctx context.Context, rs *ReplicaSet, owned []*Pod) error {
	st := ReplicaSetStatus{Replicas: int32(len(owned)), ObservedGeneration: rs.Generation}
	for _, p := range owned {
		if p.ready() {
			st.ReadyReplicas++
			st.AvailableReplicas++ // minReadySeconds is 0 in this controller
		}
	}
	if st == rs.Status {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": st})
	if err != nil {
		return err
	}
	_, err = r.rsClient.Patch(ctx, rs.Namespace, rs.Name, client.MergePatch, patch, client.PatchOptions{Subresource: "status"})
	if kube.IsNotFound(err) {
		return nil // deleted meanwhile: the next reconcile deletes its pods
	}
	return err
}

// deleteAll deletes the pods of a ReplicaSet that is gone.
func (r *reconciler) deleteAll(ctx context.Context, owned []*Pod) error {
	for _, p := range owned {
		err := r.podClient.Delete(ctx, p.Namespace, p.Name, client.DeleteOptions{Preconditions: client.Preconditions{UID: string(p.UID)}})
		if err != nil && !kube.IsNotFound(err) {
			return err
		}
	}
	return nil
}
