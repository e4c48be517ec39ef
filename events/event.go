package events

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kwatch/kwatch/kube"
)

// The event types the API server knows.
const (
	TypeNormal  = "Normal"
	TypeWarning = "Warning"
)

// Event is a core/v1 Event holding the fields the recorder writes, with
// their JSON names; it decodes any Event the server returns (unknown
// fields are ignored). The recorder writes it through package client, so
// no k8s.io/api import is needed.
type Event struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`

	InvolvedObject ObjectReference `json:"involvedObject"`
	Reason         string          `json:"reason,omitempty"`
	Message        string          `json:"message,omitempty"`
	Source         Source          `json:"source,omitempty"`
	FirstTimestamp metav1.Time     `json:"firstTimestamp,omitempty"`
	LastTimestamp  metav1.Time     `json:"lastTimestamp,omitempty"`
	Count          int32           `json:"count,omitempty"`
	Type           string          `json:"type,omitempty"`
	// ReportingController is v1's reportingComponent.
	ReportingController string `json:"reportingComponent"`
	ReportingInstance   string `json:"reportingInstance"`
}

// Source is an Event's source: the component that reported it and, as
// client-go's recorder fills it, the host (the reporting instance).
type Source struct {
	Component string `json:"component,omitempty"`
	Host      string `json:"host,omitempty"`
}

// ObjectReference names the object an Event is about, as core/v1's
// ObjectReference does. It is also an Object, so a caller holding only a
// reference can record an event about it.
type ObjectReference struct {
	Kind            string    `json:"kind,omitempty"`
	Namespace       string    `json:"namespace,omitempty"`
	Name            string    `json:"name,omitempty"`
	UID             types.UID `json:"uid,omitempty"`
	APIVersion      string    `json:"apiVersion,omitempty"`
	ResourceVersion string    `json:"resourceVersion,omitempty"`
	FieldPath       string    `json:"fieldPath,omitempty"`
}

// Object is what an event can be about: any object embedding
// metav1.ObjectMeta (a typed k8s.io/api object, a slim struct,
// *unstructured.Unstructured), or an ObjectReference.
//
// Its kind and apiVersion come from its GetObjectKind (every type
// embedding metav1.TypeMeta has one) when set. Objects decoded from a
// list often carry no kind; name their resource with Ref.
type Object interface {
	GetNamespace() string
	GetName() string
	GetUID() types.UID
	GetResourceVersion() string
}

// GetNamespace returns r.Namespace.
func (r ObjectReference) GetNamespace() string { return r.Namespace }

// GetName returns r.Name.
func (r ObjectReference) GetName() string { return r.Name }

// GetUID returns r.UID.
func (r ObjectReference) GetUID() types.UID { return r.UID }

// GetResourceVersion returns r.ResourceVersion.
func (r ObjectReference) GetResourceVersion() string { return r.ResourceVersion }

// Ref returns the reference to obj, an object of res: its kind and
// apiVersion from res, the rest from obj.
//
//	rec.Eventf(events.Ref(Pods, pod), events.TypeWarning, "BackOff", "restarting %s", pod.Name)
func Ref[T Object](res kube.TypedResource[T], obj T) ObjectReference {
	r := res.Resource()
	return ObjectReference{
		Kind: r.Kind, APIVersion: r.GroupVersion(),
		Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion(),
	}
}

// referenceOf returns the reference the recorder writes for obj.
func referenceOf(obj Object) ObjectReference {
	if r, ok := obj.(ObjectReference); ok {
		return r
	}
	if r, ok := obj.(*ObjectReference); ok {
		return *r
	}
	ref := ObjectReference{Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion()}
	if k, ok := obj.(interface{ GetObjectKind() schema.ObjectKind }); ok {
		ref.APIVersion, ref.Kind = k.GetObjectKind().GroupVersionKind().ToAPIVersionAndKind()
	}
	return ref
}
