package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/kube"
)

// AlreadyOwnedError is SetControllerReference's refusal: the object
// already has a controller owner, and Kubernetes allows one.
type AlreadyOwnedError struct {
	// Object is the object's "namespace/name".
	Object string
	// Owner is its existing controller reference.
	Owner metav1.OwnerReference
}

func (e *AlreadyOwnedError) Error() string {
	return fmt.Sprintf("controller: %s is already controlled by %s %s (uid %s)", e.Object, e.Owner.Kind, e.Owner.Name, e.Owner.UID)
}

// SetControllerReference makes owner, an object of ownerRes, the
// controller owner of obj: an ownerReference with ownerRes's apiVersion
// and kind, owner's name and uid, controller: true and
// blockOwnerDeletion: true (the garbage collector then deletes obj after
// owner, and Owns maps obj's changes to owner's key). A reference to the
// same owner (by uid) is replaced; other owners' references are kept. It
// refuses, with an *AlreadyOwnedError, an obj controlled by another owner,
// and with an error an owner the API server would not accept: one without
// a uid (not created yet), or in another namespace than obj.
//
// Both may be any type embedding metav1.ObjectMeta (as a pointer):
//
//	err := controller.SetControllerReference(ReplicaSets, rs, pod)
func SetControllerReference[O metav1.Object](ownerRes kube.TypedResource[O], owner O, obj metav1.Object) error {
	res := ownerRes.Resource()
	if ownerRes.IsZero() {
		return errors.New("controller: SetControllerReference: the zero kube.TypedResource names no owner resource")
	}
	if owner.GetUID() == "" {
		return fmt.Errorf("controller: owner %s %s has no uid: create it (or read it from a cache) first", res.Kind, owner.GetName())
	}
	if res.Namespaced && owner.GetNamespace() != obj.GetNamespace() {
		return fmt.Errorf("controller: owner %s %s/%s cannot own %s/%s: a namespaced owner owns objects of its own namespace only",
			res.Kind, owner.GetNamespace(), owner.GetName(), obj.GetNamespace(), obj.GetName())
	}
	yes := true
	ref := metav1.OwnerReference{APIVersion: res.GroupVersion(), Kind: res.Kind,
		Name: owner.GetName(), UID: owner.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}
	refs := obj.GetOwnerReferences()
	for _, r := range refs {
		if r.Controller != nil && *r.Controller && r.UID != ref.UID {
			return &AlreadyOwnedError{Object: objectName(obj), Owner: r}
		}
	}
	out := make([]metav1.OwnerReference, 0, len(refs)+1)
	for _, r := range refs {
		if r.UID != ref.UID {
			out = append(out, r)
		}
	}
	obj.SetOwnerReferences(append(out, ref))
	return nil
}

func objectName(obj metav1.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// loggerKey is the context key of a reconcile's logger.
type loggerKey struct{}

// withLogger returns ctx carrying log for LoggerFrom.
func withLogger(ctx context.Context, log *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey{}, log)
}

// LoggerFrom returns the logger of the reconcile ctx belongs to: the
// manager's logger with the controller's name ("controller") and the key
// ("key"), so that every line a reconcile logs says what it was about.
// Outside a reconcile it returns slog.Default().
func LoggerFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// Setup is the start every controller's main repeats, in one call: a
// context that ends on SIGINT or SIGTERM, the cluster's config found as
// kubectl finds it (opts.Path, else $KUBECONFIG or ~/.kube/config, else
// the in-cluster service account; see kube.DefaultConfig), and a client on
// it. stop releases the signal handler (a second signal then kills the
// process as usual); on error there is nothing to stop.
//
//	ctx, c, stop, err := controller.Setup(kube.KubeconfigOptions{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer stop()
func Setup(opts kube.KubeconfigOptions) (ctx context.Context, c *kube.Client, stop context.CancelFunc, err error) {
	cfg, err := kube.DefaultConfig(opts)
	if err != nil {
		return nil, nil, nil, err
	}
	if c, err = kube.NewClient(cfg); err != nil {
		return nil, nil, nil, err
	}
	ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	return ctx, c, stop, nil
}
