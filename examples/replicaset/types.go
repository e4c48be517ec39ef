package replicaset

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/kube"
)

// ReplicaSets and Pods pair the types below with their resources, for
// every cache, client and source of the controller.
var (
	ReplicaSets = kube.Typed[*ReplicaSet](kube.ReplicaSets)
	Pods        = kube.Typed[*Pod](kube.Pods)
)

// ReplicaSet holds what the controller reads and writes of an
// apps/v1 ReplicaSet. The library module has no k8s.io/api, so these are
// slim types; *appsv1.ReplicaSet works the same.
type ReplicaSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ReplicaSetSpec   `json:"spec"`
	Status            ReplicaSetStatus `json:"status"`
}

// ReplicaSetSpec is the desired state.
type ReplicaSetSpec struct {
	Replicas *int32                `json:"replicas,omitempty"`
	Selector *metav1.LabelSelector `json:"selector"`
	Template PodTemplate           `json:"template"`
}

// PodTemplate is the pods' metadata and spec; the spec is copied into each
// pod as it is.
type PodTemplate struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     json.RawMessage   `json:"spec"`
}

// ReplicaSetStatus is what the controller observed.
type ReplicaSetStatus struct {
	Replicas           int32 `json:"replicas"`
	ReadyReplicas      int32 `json:"readyReplicas,omitempty"`
	AvailableReplicas  int32 `json:"availableReplicas,omitempty"`
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Pod holds what the controller reads of a core/v1 Pod.
type Pod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              json.RawMessage `json:"spec,omitempty"`
	Status            struct {
		Phase      string `json:"phase,omitempty"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions,omitempty"`
	} `json:"status"`
}

// ready reports the pod's Ready condition.
func (p *Pod) ready() bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}
