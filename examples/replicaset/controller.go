// Package replicaset is a ReplicaSet controller built on kwatch's
// controller layer, without client-go: it keeps spec.replicas pods with
// the template's labels and spec, owned by the ReplicaSet (a controller
// ownerReference), deletes the surplus, writes status.replicas,
// readyReplicas, availableReplicas and observedGeneration through the
// status subresource, records SuccessfulCreate and SuccessfulDelete
// Events as the real controller does, and, standing in for kube-controller-manager's
// garbage collector, deletes the pods of a ReplicaSet that is gone (so it
// reconciles keys, Config.Reconcile: ReconcileObject skips a gone object).
//
// Template changes apply to pods created afterwards, as with the real
// ReplicaSet controller; existing pods are left alone.
//
// It keeps no expectations of its own, as kube-controller-manager's
// ReplicaSet controller must: the manager parks a ReplicaSet's next
// reconcile until the caches show the pods its last one created and
// deleted (package controller's expectations), so a reconcile never counts
// pods on a cache that lags its own writes.
package replicaset

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/events"
	"github.com/kwatch/kwatch/kube"
)

// Setup adds the controller to mgr.
func Setup(mgr *controller.Manager, workers int) error {
	r := &reconciler{
		rsClient:  client.For(mgr.Client(), ReplicaSets, client.Options{FieldManager: "replicaset-controller"}),
		podClient: client.For(mgr.Client(), Pods, client.Options{FieldManager: "replicaset-controller"})}
	// The controller comes before the caches, so that the pod cache is
	// built with the owner index that Owns asks for (Reader.Owned).
	_, err := controller.New(mgr, controller.Config[*ReplicaSet]{
		Name:      "replicaset",
		For:       ReplicaSets,
		Owns:      []controller.Source{controller.Owns(Pods)},
		Reconcile: r.reconcile,
		Workers:   workers,
	})
	if err != nil {
		return err
	}
	if r.rs, err = controller.Cache(mgr, ReplicaSets); err != nil {
		return err
	}
	if r.pods, err = controller.Cache(mgr, Pods); err != nil {
		return err
	}
	r.events, err = mgr.Recorder("replicaset-controller")
	return err
}

type reconciler struct {
	rs        *controller.Reader[*ReplicaSet]
	pods      *controller.Reader[*Pod]
	rsClient  *client.Client[*ReplicaSet]
	podClient *client.Client[*Pod]
	events    *events.Recorder
}

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
	if err := r.scale(ctx, key, rs, owned); err != nil {
		return controller.Result{}, err
	}
	return controller.Result{}, r.writeStatus(ctx, rs, owned)
}

// ownedPods lists the pods rs controls, without those being deleted: by
// the owner index when rs exists (its uid: not a pod of an earlier
// ReplicaSet of the same name), by name when it is gone.
func (r *reconciler) ownedPods(ctx context.Context, key controller.Key, rs *ReplicaSet, exists bool) ([]*Pod, error) {
	var pods []*Pod
	var err error
	if exists {
		pods, err = r.pods.Owned(ctx, rs)
	} else {
		pods, err = r.pods.List(ctx, controller.ListOptions{Namespace: key.Namespace})
	}
	if err != nil {
		return nil, err
	}
	var out []*Pod
	for _, p := range pods {
		ref := metav1.GetControllerOfNoCopy(p)
		if ref != nil && ref.Kind == "ReplicaSet" && ref.Name == key.Name && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *Pod) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// scale creates or deletes pods to reach spec.replicas.
func (r *reconciler) scale(ctx context.Context, key controller.Key, rs *ReplicaSet, owned []*Pod) error {
	want := 1
	if rs.Spec.Replicas != nil {
		want = int(*rs.Spec.Replicas)
	}
	for i := len(owned); i < want; i++ {
		p, err := newPod(rs)
		if err == nil {
			p, err = r.podClient.Create(ctx, p, client.CreateOptions{})
		}
		if err != nil {
			r.events.Eventf(events.Ref(ReplicaSets, rs), events.TypeWarning, "FailedCreate", "Error creating: %v", err)
			return fmt.Errorf("creating a pod for %s: %w", key, err)
		}
		r.events.Eventf(events.Ref(ReplicaSets, rs), events.TypeNormal, "SuccessfulCreate", "Created pod: %s", p.Name)
	}
	for _, p := range owned[min(want, len(owned)):] {
		err := r.podClient.Delete(ctx, p.Namespace, p.Name, client.DeleteOptions{Preconditions: client.Preconditions{UID: string(p.UID)}})
		if err != nil && !kube.IsNotFound(err) {
			return fmt.Errorf("deleting pod %s: %w", p.Name, err)
		}
		r.events.Eventf(events.Ref(ReplicaSets, rs), events.TypeNormal, "SuccessfulDelete", "Deleted pod: %s", p.Name)
	}
	return nil
}

// newPod is a pod of rs's template, controlled by rs.
func newPod(rs *ReplicaSet) (*Pod, error) {
	p := &Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace: rs.Namespace, GenerateName: rs.Name + "-",
		Labels: rs.Spec.Template.Metadata.Labels, Annotations: rs.Spec.Template.Metadata.Annotations,
	}, Spec: rs.Spec.Template.Spec}
	return p, controller.SetControllerReference(ReplicaSets, rs, p)
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
