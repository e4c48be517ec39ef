package sim

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
)

// ResourceInfo describes a resource type the server stores and serves generically as
// JSON objects. Register one with Options.Resources or Server.RegisterResource.
type ResourceInfo struct {
	// Group is the API group; empty means the core group (served under /api/v1).
	Group string
	// Version is the API version, for example "v1". Required.
	Version string
	// Resource is the plural lower-case name used in URLs, for example "configmaps". Required.
	Resource string
	// Singular is the singular name for discovery. Empty means lower-case Kind.
	Singular string
	// Kind is the object kind, for example "ConfigMap". Required.
	Kind string
	// Namespaced says whether objects live in a namespace.
	Namespaced bool
	// ShortNames are discovery aliases such as "cm". Nil means none.
	ShortNames []string
	// Categories are discovery categories such as "all". Nil means none.
	Categories []string
	// Fields are the dotted JSON paths usable in field selectors besides
	// metadata.name and metadata.namespace, for example "spec.nodeName". Nil means none.
	Fields []string
	// BookmarkBody is the JSON placed after "metadata" in this kind's BOOKMARK objects,
	// mirroring the empty fields the real server's typed objects carry, for example
	// `"spec":{},"status":{}`. Empty means none.
	BookmarkBody string
	// StatusSubresource gives the resource a status subresource (<object>/status), as
	// the built-in kinds with a status and custom resources that enable it have: a
	// client's create discards the status it sent, a PUT or PATCH of the object keeps
	// the stored status, and only writes to /status change it. False means status is
	// an ordinary field and /status is 404.
	StatusSubresource bool
	// PrinterColumns are a custom resource's additionalPrinterColumns: its
	// Table (as=Table) shows NAME, then these. Nil means the real server's
	// default for a custom resource, AGE only. Built-in kinds print the real
	// server's columns whatever this says (table.go).
	PrinterColumns []PrinterColumn
}

// key returns the name the in-process API uses for the resource: "pods" for the core
// group, "deployments.apps" otherwise.
func (ri ResourceInfo) key() string {
	if ri.Group == "" {
		return ri.Resource
	}
	return ri.Resource + "." + ri.Group
}

// apiVersion returns "v1" or "apps/v1".
func (ri ResourceInfo) apiVersion() string {
	if ri.Group == "" {
		return ri.Version
	}
	return ri.Group + "/" + ri.Version
}

func (ri ResourceInfo) validate() error {
	switch {
	case ri.Version == "":
		return fmt.Errorf("sim: ResourceInfo.Version is required (resource %q)", ri.Resource)
	case ri.Resource == "" || strings.ContainsAny(ri.Resource, "/. "):
		return fmt.Errorf("sim: ResourceInfo.Resource %q must be a non-empty plural without '/', '.' or spaces", ri.Resource)
	case ri.Kind == "":
		return fmt.Errorf("sim: ResourceInfo.Kind is required (resource %q)", ri.Resource)
	}
	return nil
}

// verb indexes the per-resource request counters.
type verb int

const (
	verbList verb = iota
	verbWatch
	verbGet
	verbCreate
	verbUpdate
	verbPatch
	verbDelete
	numVerbs
)

// resource is a registered resource with its objects. Every field below info is
// guarded by store.mu.
type resource struct {
	info     ResourceInfo
	fieldSet map[string]bool // supported field selector paths
	// bookmark[0] + RV + `"}` (or the initial-events-end annotation) + bookmark[1]
	// is this kind's BOOKMARK object.
	bookmark [2]string

	objs map[string]*object // key ("ns/name" or "name") -> current object
	// sorted holds every key of objs in order plus possibly deleted keys not yet
	// dropped; pending holds keys created since the last merge. sortedLocked merges.
	sorted  []string
	pending []string
	deleted int // keys deleted since the last merge (tombstones in sorted)

	counts [numVerbs]atomic.Uint64 // request counters; not guarded by the lock
}

func newResource(ri ResourceInfo) *resource {
	r := &resource{info: ri, objs: make(map[string]*object), fieldSet: map[string]bool{
		"metadata.name": true, "metadata.namespace": true,
	}}
	if ri.Singular == "" {
		r.info.Singular = strings.ToLower(ri.Kind)
	}
	for _, f := range ri.Fields {
		r.fieldSet[f] = true
	}
	body := ""
	if ri.BookmarkBody != "" {
		body = "," + ri.BookmarkBody
	}
	r.bookmark = [2]string{
		`{"kind":` + quote(ri.Kind) + `,"apiVersion":` + quote(ri.apiVersion()) + `,"metadata":{"resourceVersion":"`,
		body + `}`,
	}
	return r
}

// objKey builds the store key of an object.
func (r *resource) objKey(ns, name string) string {
	if r.info.Namespaced {
		return ns + "/" + name
	}
	return name
}

// sortedLocked returns every current key in order. The caller holds store.mu for writing.
func (r *resource) sortedLocked() []string {
	if len(r.pending) == 0 && r.deleted == 0 {
		return r.sorted
	}
	sort.Strings(r.pending)
	merged := make([]string, 0, len(r.objs))
	i, j := 0, 0
	for i < len(r.sorted) || j < len(r.pending) {
		var k string
		if j >= len(r.pending) || (i < len(r.sorted) && r.sorted[i] <= r.pending[j]) {
			k = r.sorted[i]
			i++
		} else {
			k = r.pending[j]
			j++
		}
		if _, ok := r.objs[k]; !ok {
			continue
		}
		if n := len(merged); n > 0 && merged[n-1] == k {
			continue
		}
		merged = append(merged, k)
	}
	r.sorted, r.pending, r.deleted = merged, nil, 0
	return r.sorted
}

// defaultResources are registered by every server: enough for kubectl get of the
// usual kinds. Pods get realistic generated bodies via Server.PutPod.
func defaultResources() []ResourceInfo {
	return []ResourceInfo{
		{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true, ShortNames: []string{"po"},
			Categories: []string{"all"}, Fields: podFieldPaths, StatusSubresource: true,
			BookmarkBody: `"spec":{"containers":null},"status":{}`},
		{Version: "v1", Resource: "namespaces", Kind: "Namespace", ShortNames: []string{"ns"},
			Fields: []string{"status.phase"}, StatusSubresource: true, BookmarkBody: `"spec":{},"status":{}`},
		{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true, ShortNames: []string{"cm"}},
		{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true, Fields: []string{"type"}},
		{Version: "v1", Resource: "events", Kind: "Event", Namespaced: true, ShortNames: []string{"ev"}, Fields: eventFieldPaths},
		{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Kind: "Lease", Namespaced: true,
			BookmarkBody: `"spec":{}`},
		{Version: "v1", Resource: "services", Kind: "Service", Namespaced: true, ShortNames: []string{"svc"},
			Categories: []string{"all"}, StatusSubresource: true, BookmarkBody: `"spec":{},"status":{"loadBalancer":{}}`},
		{Version: "v1", Resource: "nodes", Kind: "Node", ShortNames: []string{"no"},
			Fields: []string{"spec.unschedulable"}, StatusSubresource: true, BookmarkBody: `"spec":{},"status":{"daemonEndpoints":{"kubeletEndpoint":{"Port":0}},"nodeInfo":{"machineID":"","systemUUID":"","bootID":"","kernelVersion":"","osImage":"","containerRuntimeVersion":"","kubeletVersion":"","kubeProxyVersion":"","operatingSystem":"","architecture":""}}`},
		{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true,
			ShortNames: []string{"deploy"}, Categories: []string{"all"}, StatusSubresource: true,
			BookmarkBody: `"spec":{"selector":null,"template":{"metadata":{},"spec":{"containers":null}},"strategy":{}},"status":{}`},
		{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true,
			ShortNames: []string{"rs"}, Categories: []string{"all"}, StatusSubresource: true,
			BookmarkBody: `"spec":{"selector":null,"template":{"metadata":{},"spec":{"containers":null}}},"status":{"replicas":0}`},
		{Group: "apps", Version: "v1", Resource: "statefulsets", Kind: "StatefulSet", Namespaced: true,
			ShortNames: []string{"sts"}, Categories: []string{"all"}, StatusSubresource: true,
			BookmarkBody: `"spec":{"replicas":0,"selector":null,"template":{"metadata":{},"spec":{"containers":null}},"serviceName":"","updateStrategy":{}},"status":{"replicas":0,"availableReplicas":0}`},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations",
			Kind: "ValidatingWebhookConfiguration"},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations",
			Kind: "MutatingWebhookConfiguration"},
		{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions",
			Kind: "CustomResourceDefinition", ShortNames: []string{"crd", "crds"}, StatusSubresource: true,
			BookmarkBody: `"spec":{"group":"","names":{"plural":"","kind":""},"scope":"","versions":null},"status":{"conditions":null,"acceptedNames":{"plural":"","kind":""},"storedVersions":null}`},
	}
}

// eventFieldPaths are the core/v1 event fields the real server accepts in
// field selectors.
var eventFieldPaths = []string{
	"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
	"involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
	"reason", "reportingComponent", "source", "type",
}

// podFieldPaths are the pod fields the real server accepts in field selectors.
var podFieldPaths = []string{
	"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
	"spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName",
}
