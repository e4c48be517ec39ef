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

// allVerbs are the verbs of a resource that takes every one.
var allVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// Well-known resources, as the API server's discovery describes them, for
// call sites that need no discovery round trip. Others come from
// Client.Resolve or are written out.
var (
	Pods         = Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true, ShortNames: []string{"po"}, Verbs: allVerbs}
	ConfigMaps   = Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true, ShortNames: []string{"cm"}, Verbs: allVerbs}
	Secrets      = Resource{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true, Verbs: allVerbs}
	Services     = Resource{Version: "v1", Resource: "services", Kind: "Service", Namespaced: true, ShortNames: []string{"svc"}, Verbs: allVerbs}
	Namespaces   = Resource{Version: "v1", Resource: "namespaces", Kind: "Namespace", ShortNames: []string{"ns"}, Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}}
	Nodes        = Resource{Version: "v1", Resource: "nodes", Kind: "Node", ShortNames: []string{"no"}, Verbs: allVerbs}
	Events       = Resource{Version: "v1", Resource: "events", Kind: "Event", Namespaced: true, ShortNames: []string{"ev"}, Verbs: allVerbs}
	Deployments  = Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true, ShortNames: []string{"deploy"}, Verbs: allVerbs}
	ReplicaSets  = Resource{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true, ShortNames: []string{"rs"}, Verbs: allVerbs}
	StatefulSets = Resource{Group: "apps", Version: "v1", Resource: "statefulsets", Kind: "StatefulSet", Namespaced: true, ShortNames: []string{"sts"}, Verbs: allVerbs}
	DaemonSets   = Resource{Group: "apps", Version: "v1", Resource: "daemonsets", Kind: "DaemonSet", Namespaced: true, ShortNames: []string{"ds"}, Verbs: allVerbs}
	Leases       = Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Kind: "Lease", Namespaced: true, Verbs: allVerbs}
)

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
