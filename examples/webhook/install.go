package widgets

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
)

// The names of the objects Install writes, for webhook.SelfSigned.
const (
	CRDName        = "widgets.webhook.example.com"
	MutatingName   = "widgets-defaulting"
	ValidatingName = "widgets-validation"
)

// Widgets is widgets in v2, the storage version, as WidgetV2.
var Widgets = kube.Typed[*WidgetV2](kube.Resource{Group: Group, Version: "v2", Resource: "widgets", Kind: "Widget", Namespaced: true})

// WidgetsV1 is widgets in v1, as WidgetV1.
var WidgetsV1 = kube.Typed[*WidgetV1](kube.Resource{Group: Group, Version: "v1", Resource: "widgets", Kind: "Widget", Namespaced: true})

var (
	crds        = kube.Resource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions", Kind: "CustomResourceDefinition"}
	mutatings   = kube.Resource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations", Kind: "MutatingWebhookConfiguration"}
	validatings = kube.Resource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations", Kind: "ValidatingWebhookConfiguration"}
)

// Manifests are the CRD and the two webhook configurations, calling the
// server at baseURL ("https://127.0.0.1:9443" in development; in a
// cluster a Service reference instead) and trusting caBundle (PEM; nil
// when webhook.SelfSigned or cert-manager's CA injector fills it in).
func Manifests(baseURL string, caBundle []byte) []map[string]any {
	cc := func(path string) map[string]any {
		m := map[string]any{"url": baseURL + path}
		if len(caBundle) > 0 {
			m["caBundle"] = caBundle // []byte: JSON base64, as the API wants
		}
		return m
	}
	schema := map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}
	version := func(name string, storage bool) map[string]any {
		return map[string]any{"name": name, "served": true, "storage": storage, "schema": schema}
	}
	crd := map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": CRDName},
		"spec": map[string]any{"group": Group, "scope": "Namespaced",
			"names":    map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{version("v1", false), version("v2", true)},
			"conversion": map[string]any{"strategy": "Webhook", "webhook": map[string]any{
				"conversionReviewVersions": []any{"v1"}, "clientConfig": cc(ConvertPath)}}}}
	rules := []any{map[string]any{"operations": []any{"CREATE", "UPDATE"}, "apiGroups": []any{Group},
		"apiVersions": []any{"v2"}, "resources": []any{"widgets"}, "scope": "Namespaced"}}
	hook := func(name, path string) map[string]any {
		return map[string]any{"name": name, "clientConfig": cc(path), "rules": rules, "failurePolicy": "Fail",
			"sideEffects": "None", "admissionReviewVersions": []any{"v1"}, "timeoutSeconds": 5,
			"matchPolicy": "Equivalent"}
	}
	mutating := map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
		"metadata": map[string]any{"name": MutatingName}, "webhooks": []any{hook("default.widgets.example.com", DefaultPath)}}
	validating := map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
		"metadata": map[string]any{"name": ValidatingName}, "webhooks": []any{hook("validate.widgets.example.com", ValidatePath)}}
	return []map[string]any{crd, mutating, validating}
}

// Install creates the Manifests on c, or replaces them when they exist.
func Install(ctx context.Context, c *kube.Client, baseURL string, caBundle []byte) error {
	for i, m := range Manifests(baseURL, caBundle) {
		res := []kube.Resource{crds, mutatings, validatings}[i]
		r := client.For(c, kube.Typed[*unstructured.Unstructured](res), client.Options{FieldManager: "widgets-install"})
		obj := &unstructured.Unstructured{Object: m}
		_, err := r.Create(ctx, obj, client.CreateOptions{})
		if kube.IsAlreadyExists(err) {
			_, err = r.Modify(ctx, "", obj.GetName(), func(cur *unstructured.Unstructured) error {
				cur.Object["spec"], cur.Object["webhooks"] = m["spec"], m["webhooks"]
				if m["spec"] == nil {
					delete(cur.Object, "spec")
				}
				if m["webhooks"] == nil {
					delete(cur.Object, "webhooks")
				}
				return nil
			}, client.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("install %s %s: %w", res.Kind, obj.GetName(), err)
		}
	}
	return nil
}
