package kube

import (
	"net/url"
	"strings"
)

// Resource names one API resource: where it lives and how it is called.
// The zero value is not usable; build one with the fields of a discovery
// answer or take one from Client.Resolve.
type Resource struct {
	Group      string // "" for the core group
	Version    string // "v1"
	Resource   string // plural, lower case: "pods"
	Kind       string // "Pod"
	Namespaced bool
	ShortNames []string
	Verbs      []string

	singular string // from discovery; Kind in lower case when empty
}

// Pods is the core/v1 pods resource.
var Pods = Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true,
	ShortNames: []string{"po"}, Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}}

// GroupVersion is "v1" for the core group and "GROUP/VERSION" otherwise.
func (r Resource) GroupVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// String is "pods" for core resources and "deployments.apps" otherwise.
func (r Resource) String() string {
	if r.Group == "" {
		return r.Resource
	}
	return r.Resource + "." + r.Group
}

// Path is the collection path of r in namespace ns ("" for all namespaces
// or for a cluster-scoped resource).
func (r Resource) Path(ns string) string {
	var b strings.Builder
	if r.Group == "" {
		b.WriteString("/api/")
	} else {
		b.WriteString("/apis/")
		b.WriteString(r.Group)
		b.WriteByte('/')
	}
	b.WriteString(r.Version)
	if r.Namespaced && ns != "" {
		b.WriteString("/namespaces/")
		b.WriteString(url.PathEscape(ns))
	}
	b.WriteByte('/')
	b.WriteString(r.Resource)
	return b.String()
}
