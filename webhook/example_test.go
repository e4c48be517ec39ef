package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/kwatch/kwatch/webhook"
)

// Widget is a custom resource as its Go type.
type Widget struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Metadata   struct {
		Name   string            `json:"name,omitempty"`
		Labels map[string]string `json:"labels,omitempty"`
	} `json:"metadata"`
	Spec struct {
		Size  int    `json:"size"`
		Color string `json:"color,omitempty"`
	} `json:"spec"`
}

// review posts an AdmissionReview of obj to h, as the API server does, and
// returns the response.
func review(h http.Handler, path string, obj any) *webhook.AdmissionResponse {
	raw, _ := json.Marshal(obj)
	body, _ := json.Marshal(webhook.AdmissionReview{APIVersion: webhook.AdmissionAPIVersion, Kind: webhook.AdmissionKind,
		Request: &webhook.AdmissionRequest{UID: "1", Operation: webhook.Create, Object: raw}})
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var rv webhook.AdmissionReview
	_ = json.Unmarshal(w.Body.Bytes(), &rv)
	return rv.Response
}

func ExampleValidating() {
	srv, _ := webhook.New(webhook.Options{SelfSigned: &webhook.SelfSigned{}})
	_ = srv.Admission("/validate-widgets", webhook.Validating(func(_ context.Context, r *webhook.Request[Widget]) (webhook.Warnings, error) {
		if r.Object.Spec.Size > 10 {
			return nil, errors.New("spec.size must be at most 10")
		}
		return nil, nil
	}))
	w := map[string]any{"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"size": 12}}
	resp := review(srv, "/validate-widgets", w)
	fmt.Println(resp.Allowed, resp.Result.Code, resp.Result.Message)
	// Output: false 403 spec.size must be at most 10
}

func ExampleMutating() {
	srv, _ := webhook.New(webhook.Options{SelfSigned: &webhook.SelfSigned{}})
	_ = srv.Admission("/default-widgets", webhook.Mutating(func(_ context.Context, _ *webhook.Request[Widget], w *Widget) (webhook.Warnings, error) {
		if w.Spec.Color == "" {
			w.Spec.Color = "blue" // change the copy; the patch is computed
		}
		return nil, nil
	}))
	w := map[string]any{"metadata": map[string]any{"name": "w", "uid": "kept"}, "spec": map[string]any{"size": 1}}
	resp := review(srv, "/default-widgets", w)
	fmt.Println(resp.Allowed, resp.PatchType, string(resp.Patch))
	// Output: true JSONPatch [{"op":"add","path":"/spec/color","value":"blue"}]
}

// WidgetV1 is an older version whose spec was one string.
type WidgetV1 struct {
	APIVersion string          `json:"apiVersion,omitempty"`
	Kind       string          `json:"kind,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	Spec       struct {
		Shape string `json:"shape"`
	} `json:"spec"`
}

func ExampleConverter() {
	conv := webhook.NewConverter[Widget]("example.com/v2")
	_ = webhook.AddVersion(conv, "example.com/v1",
		func(src *WidgetV1, dst *Widget) error {
			_, err := fmt.Sscanf(src.Spec.Shape, "%d/%s", &dst.Spec.Size, &dst.Spec.Color)
			return err
		},
		func(src *Widget, dst *WidgetV1) error {
			dst.Spec.Shape = fmt.Sprintf("%d/%s", src.Spec.Size, src.Spec.Color)
			return nil
		})
	resp := conv.Convert(&webhook.ConversionRequest{UID: "1", DesiredAPIVersion: "example.com/v1", Objects: []json.RawMessage{
		json.RawMessage(`{"apiVersion":"example.com/v2","kind":"Widget","metadata":{"name":"w"},"spec":{"size":3,"color":"red"}}`)}})
	fmt.Println(resp.Result.Status, string(resp.ConvertedObjects[0]))
	// Output: Success {"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"shape":"3/red"}}
}
