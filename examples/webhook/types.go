package widgets

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Group is the API group of widgets; V1 and V2 its versions. V2 is the
// storage version and the hub of the conversion.
const (
	Group = "webhook.example.com"
	V1    = Group + "/v1"
	V2    = Group + "/v2"
)

// WidgetV2 is a widget in v2, the storage version: its look is a struct.
type WidgetV2 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SpecV2 `json:"spec"`
}

// SpecV2 is a v2 widget's spec.
type SpecV2 struct {
	// Size is 1 to MaxSize; DefaultSize when absent.
	Size int  `json:"size,omitempty"`
	Look Look `json:"look"`
}

// Look is how a v2 widget looks.
type Look struct {
	// Color is DefaultColor when absent.
	Color string `json:"color,omitempty"`
	// Finish is new in v2; a v1 widget keeps it in FinishAnnotation.
	Finish string `json:"finish,omitempty"`
}

// WidgetV1 is a widget in v1, still served: its color sits beside its size.
type WidgetV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SpecV1 `json:"spec"`
}

// SpecV1 is a v1 widget's spec.
type SpecV1 struct {
	Size  int    `json:"size,omitempty"`
	Color string `json:"color,omitempty"`
}

// The rules the webhooks keep.
const (
	MaxSize      = 10
	DefaultSize  = 1
	DefaultColor = "blue"
	// DefaultedLabel is set by the defaulting webhook on every widget.
	DefaultedLabel = "widgets.example.com/defaulted"
	// FinishAnnotation carries v2's look.finish through v1, so a widget
	// read in v1 and written back keeps it.
	FinishAnnotation = "widgets.example.com/finish"
)
