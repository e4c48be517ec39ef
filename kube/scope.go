package kube

import (
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Scope narrows a resource to the objects a list, a watch or a cache
// covers: one namespace or all of them, and the server's label and field
// selectors. The zero Scope is every object of the resource. It is the one
// type of the three for every layer: watch.List and watch.Watch,
// client.Client's List and DeleteCollection, informer.Options, and the
// controller's caches and sources, where the resource, the Go type and
// the Scope name one shared informer. A Scope is a small comparable value,
// safe to copy and to share.
type Scope struct {
	// Namespace limits the scope to one namespace; "" is every namespace.
	// It does not apply to a cluster-scoped resource.
	Namespace string
	// LabelSelector, in the API's syntax ("app=web,tier!=db"); "" selects
	// every object.
	LabelSelector string
	// FieldSelector, in the API's syntax ("spec.nodeName=n1"); "" selects
	// every object. Which fields a resource may be selected by is the
	// server's to say (metadata.name and metadata.namespace always).
	FieldSelector string
}

// Validate reports what is malformed in s, naming the field: a namespace
// that is not a DNS label, or a selector that does not parse as the API
// server parses it. Which fields a field selector may name is the
// server's to judge; Validate does not guess. Code that sends one
// request leaves s to the server (whose 400 names the problem); what
// builds a long-lived cache on s calls Validate first.
func (s Scope) Validate() error {
	if s.Namespace != "" {
		if msgs := validation.IsDNS1123Label(s.Namespace); len(msgs) > 0 {
			return fmt.Errorf("kube: Scope.Namespace %q: %s", s.Namespace, strings.Join(msgs, "; "))
		}
	}
	if _, err := labels.Parse(s.LabelSelector); err != nil {
		return fmt.Errorf("kube: Scope.LabelSelector %q: %w", s.LabelSelector, err)
	}
	if _, err := fields.ParseSelector(s.FieldSelector); err != nil {
		return fmt.Errorf("kube: Scope.FieldSelector %q: %w", s.FieldSelector, err)
	}
	return nil
}

// SetQuery sets the labelSelector and fieldSelector parameters of q from
// s's selectors, leaving out the empty ones. The namespace is in the path
// (Resource.Path), not the query.
func (s Scope) SetQuery(q url.Values) {
	if s.LabelSelector != "" {
		q.Set("labelSelector", s.LabelSelector)
	}
	if s.FieldSelector != "" {
		q.Set("fieldSelector", s.FieldSelector)
	}
}

// String is "namespace=x,labels=y,fields=z" with the empty parts left
// out: "" for the zero Scope.
func (s Scope) String() string {
	var parts []string
	if s.Namespace != "" {
		parts = append(parts, "namespace="+s.Namespace)
	}
	if s.LabelSelector != "" {
		parts = append(parts, "labels="+s.LabelSelector)
	}
	if s.FieldSelector != "" {
		parts = append(parts, "fields="+s.FieldSelector)
	}
	return strings.Join(parts, ",")
}
