// Package widgets is an example of admission and conversion webhooks
// served by a kwatch manager: a custom resource, widgets.example.com, with
// two versions (v1, and v2 which is stored), a defaulting webhook (size,
// color and a label), a validating webhook (size at most MaxSize; the
// color may not change) and a conversion webhook between v1 and v2.
// Install writes the CRD and the two webhook configurations; Setup serves
// the handlers on the manager's webhook server.
package widgets

import (
	"context"
	"fmt"

	"github.com/kwatch/kwatch/webhook"
)

// The paths the webhooks are served at.
const (
	DefaultPath  = "/default-widgets"
	ValidatePath = "/validate-widgets"
	ConvertPath  = "/convert-widgets"
)

// Setup registers the three webhooks on srv (the manager's
// ManagerOptions.Webhook).
func Setup(srv *webhook.Server) error {
	if err := srv.Admission(DefaultPath, webhook.Mutating(defaultWidget)); err != nil {
		return err
	}
	if err := srv.Admission(ValidatePath, webhook.Validating(validateWidget)); err != nil {
		return err
	}
	return srv.Conversion(ConvertPath, Converter())
}

// defaultWidget fills in the size and color and labels the widget. The
// rules name v2, so the API server sends v2 (converting a v1 write first).
func defaultWidget(_ context.Context, _ *webhook.Request[WidgetV2], w *WidgetV2) (webhook.Warnings, error) {
	if w.Spec.Size == 0 {
		w.Spec.Size = DefaultSize
	}
	if w.Spec.Look.Color == "" {
		w.Spec.Look.Color = DefaultColor
	}
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[DefaultedLabel] = "true"
	return nil, nil
}

// validateWidget keeps the size in range and the color fixed once set.
func validateWidget(_ context.Context, r *webhook.Request[WidgetV2]) (webhook.Warnings, error) {
	if r.Operation == webhook.Delete {
		return nil, nil
	}
	w := r.Object
	if w.Spec.Size < 1 || w.Spec.Size > MaxSize {
		return nil, &webhook.Denial{Code: 422, Reason: "Invalid",
			Message: fmt.Sprintf("spec.size %d is out of range: 1 to %d", w.Spec.Size, MaxSize)}
	}
	if old := r.OldObject; old != nil && old.Spec.Look.Color != w.Spec.Look.Color {
		return nil, fmt.Errorf("spec.look.color cannot change (from %q to %q)", old.Spec.Look.Color, w.Spec.Look.Color)
	}
	var warn webhook.Warnings
	if w.Spec.Size == MaxSize {
		warn = append(warn, fmt.Sprintf("widget %s is at the largest size", w.Name))
	}
	return warn, nil
}

// Converter converts between v1 and v2 through v2, the hub.
func Converter() *webhook.Converter {
	c := webhook.NewConverter[WidgetV2](V2)
	if err := webhook.AddVersion(c, V1, v1ToV2, v2ToV1); err != nil {
		panic(err) // a programming error in this file, found by its tests
	}
	return c
}

func v1ToV2(src *WidgetV1, dst *WidgetV2) error {
	dst.ObjectMeta = src.ObjectMeta
	dst.Spec = SpecV2{Size: src.Spec.Size, Look: Look{Color: src.Spec.Color, Finish: src.Annotations[FinishAnnotation]}}
	if dst.Annotations != nil {
		dst.Annotations = clone(dst.Annotations)
		delete(dst.Annotations, FinishAnnotation)
	}
	return nil
}

func v2ToV1(src *WidgetV2, dst *WidgetV1) error {
	dst.ObjectMeta = src.ObjectMeta
	dst.Spec = SpecV1{Size: src.Spec.Size, Color: src.Spec.Look.Color}
	if f := src.Spec.Look.Finish; f != "" {
		dst.Annotations = clone(dst.Annotations)
		dst.Annotations[FinishAnnotation] = f
	}
	return nil
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
