package testkit_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kwatch/kwatch/kube"
)

// kube.NewTyped refuses a k8s.io/api type paired with a resource of
// another kind, group or version when the pair is made, before any
// request; the types of the library module cannot show it, as it may not
// import k8s.io/api.
func TestTypedRefusesOtherKind(t *testing.T) {
	deploymentsV1beta2 := kube.Deployments
	deploymentsV1beta2.Version = "v1beta2"
	for _, tc := range []struct {
		name string
		err  func() error
		want string // "" for no error
	}{
		{"pods as Pod", func() error { _, err := kube.NewTyped[*corev1.Pod](kube.Pods); return err }, ""},
		{"leases as Lease", func() error { _, err := kube.NewTyped[*coordinationv1.Lease](kube.Leases); return err }, ""},
		{"deployments as Deployment", func() error { _, err := kube.NewTyped[*appsv1.Deployment](kube.Deployments); return err }, ""},
		{"replicasets as Deployment", func() error { _, err := kube.NewTyped[*appsv1.Deployment](kube.ReplicaSets); return err }, "apps/v1 Deployment"},
		{"pods as ConfigMap", func() error { _, err := kube.NewTyped[*corev1.ConfigMap](kube.Pods); return err }, "core/v1 ConfigMap"},
		{"pods as PodList", func() error { _, err := kube.NewTyped[*corev1.PodList](kube.Pods); return err }, "PodList"},
		{"v1beta2 deployments as v1", func() error { _, err := kube.NewTyped[*appsv1.Deployment](deploymentsV1beta2); return err }, "apps/v1beta2 Deployment"},
		{"apps pods", func() error {
			res := kube.Pods
			res.Group = "apps"
			_, err := kube.NewTyped[*corev1.Pod](res)
			return err
		}, "the resource is apps/v1 Pod"},
	} {
		err := tc.err()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want one naming %q", tc.name, err, tc.want)
		}
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("kube.Typed of a Deployment as replicasets did not panic")
		}
	}()
	_ = kube.Typed[*appsv1.Deployment](kube.ReplicaSets)
}
