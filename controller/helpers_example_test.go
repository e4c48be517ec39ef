package controller_test

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
)

// A pod made for a ReplicaSet gets the controller reference Owns follows;
// a second controller is refused.
func ExampleSetControllerReference() {
	replicaSets := kube.Typed[*metav1.PartialObjectMetadata](kube.ReplicaSets)
	rs := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "uid-web"}}
	pod := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-x1"}}
	if err := controller.SetControllerReference(replicaSets, rs, pod); err != nil {
		fmt.Println(err)
		return
	}
	ref := metav1.GetControllerOf(pod)
	fmt.Println(ref.APIVersion, ref.Kind, ref.Name, ref.UID, *ref.BlockOwnerDeletion)

	other := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "api", UID: "uid-api"}}
	var owned *controller.AlreadyOwnedError
	err := controller.SetControllerReference(replicaSets, other, pod)
	fmt.Println(errors.As(err, &owned), owned.Owner.Name)
	// Output:
	// apps/v1 ReplicaSet web uid-web true
	// true web
}
