package suite

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Pod is the slim pod type the suite decodes into: the metadata and the
// few fields the cases read. It shows that kwatch decodes into any type
// embedding metav1.ObjectMeta, without k8s.io/api.
type Pod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              PodSpec   `json:"spec"`
	Status            PodStatus `json:"status"`
}

// PodSpec holds the containers, which a pod must have to be created.
type PodSpec struct {
	Containers []Container `json:"containers"`
	NodeName   string      `json:"nodeName,omitempty"`
}

// Container is one container of a pod.
type Container struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// PodStatus holds the phase; with no scheduler every pod stays Pending.
type PodStatus struct {
	Phase string `json:"phase,omitempty"`
}

// newPod is a minimal valid pod named name with labels.
func newPod(ns, name string, labels map[string]string) *Pod {
	return &Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       PodSpec{Containers: []Container{{Name: "c", Image: "registry.invalid/pause"}}},
	}
}
