package client

import (
	"encoding/json"
	"net/url"
)

// PatchType is the Content-Type of a patch body.
type PatchType string

// The patch types the API server takes.
const (
	// MergePatch is a JSON merge patch (RFC 7386): maps merge, any other
	// value (lists included) is replaced, null deletes.
	MergePatch PatchType = "application/merge-patch+json"
	// JSONPatch is a JSON patch (RFC 6902): a list of operations.
	JSONPatch PatchType = "application/json-patch+json"
	// StrategicMergePatch is Kubernetes' strategic merge patch: like a
	// merge patch, but lists with a merge key (containers by name, ...)
	// merge by key. Built-in types only: the server answers 415 for custom
	// resources.
	StrategicMergePatch PatchType = "application/strategic-merge-patch+json"
	// ApplyPatch is a server-side apply configuration (YAML or JSON); use
	// Apply rather than Patch with it.
	ApplyPatch PatchType = "application/apply-patch+yaml"
)

// WriteOptions are what every write takes.
type WriteOptions struct {
	// FieldManager names the writer in metadata.managedFields. Empty means
	// the Client's (Options.FieldManager, by default DefaultFieldManager).
	FieldManager string
	// DryRun asks the server to do everything but store the result.
	DryRun bool
	// FieldValidation is "Strict", "Warn" or "Ignore" for unknown or
	// duplicate fields; empty leaves the server's default (Warn).
	FieldValidation string
}

func (o WriteOptions) query(defaultManager string) url.Values {
	q := url.Values{}
	m := o.FieldManager
	if m == "" {
		m = defaultManager
	}
	if m != "" {
		q.Set("fieldManager", m)
	}
	if o.DryRun {
		q.Set("dryRun", "All")
	}
	if o.FieldValidation != "" {
		q.Set("fieldValidation", o.FieldValidation)
	}
	return q
}

// GetOptions are the options of Get.
type GetOptions struct {
	// ResourceVersion "0" accepts the server's cached state; empty reads
	// the latest from etcd.
	ResourceVersion string
	// Subresource reads a subresource ("status") as T.
	Subresource string
}

// CreateOptions are the options of Create.
type CreateOptions struct {
	WriteOptions
	// Subresource creates through a subresource of the object named by
	// the body (such as "eviction" of a pod); the answer must decode as T.
	Subresource string
}

// UpdateOptions are the options of Update.
type UpdateOptions struct {
	WriteOptions
	// Subresource replaces a subresource ("status") instead of the object.
	Subresource string
}

// PatchOptions are the options of Patch.
type PatchOptions struct {
	WriteOptions
	// Subresource patches a subresource ("status", "scale").
	Subresource string
	// Repeatable declares the patch safe to send twice (it carries a
	// metadata.resourceVersion or uid precondition, or is a JSON patch
	// whose first operation is a test of one). Only repeatable patches are
	// sent again after a 429 or 503.
	Repeatable bool
}

// ApplyOptions are the options of Apply.
type ApplyOptions struct {
	// FieldManager names the applier; empty means the Client's. Apply
	// always sends one: the server requires it.
	FieldManager string
	// Force takes ownership of fields another manager owns instead of
	// failing with a conflict.
	Force  bool
	DryRun bool
	// Subresource applies to a subresource ("status").
	Subresource string
}

// Propagation is how a delete treats the object's dependents.
type Propagation string

// The propagation policies.
const (
	// Orphan leaves the dependents, removing their owner references.
	Orphan Propagation = "Orphan"
	// Background deletes the object now and its dependents afterwards.
	Background Propagation = "Background"
	// Foreground deletes the dependents first; the object stays, with a
	// deletionTimestamp and the foregroundDeletion finalizer, until then.
	Foreground Propagation = "Foreground"
)

// Preconditions must hold on the server for a delete to proceed; a
// mismatch is a 409 Conflict.
type Preconditions struct {
	UID             string
	ResourceVersion string
}

// DeleteOptions are the options of Delete and DeleteCollection.
type DeleteOptions struct {
	Preconditions Preconditions
	// Propagation is the policy for dependents; empty leaves the server's
	// default for the resource.
	Propagation Propagation
	// GracePeriodSeconds overrides the object's grace period (pods); nil
	// leaves it, 0 deletes at once.
	GracePeriodSeconds *int64
	DryRun             bool
}

// deleteBody is the DeleteOptions object sent with a delete.
type deleteBody struct {
	Kind          string `json:"kind"`
	APIVersion    string `json:"apiVersion"`
	Preconditions *struct {
		UID             string `json:"uid,omitempty"`
		ResourceVersion string `json:"resourceVersion,omitempty"`
	} `json:"preconditions,omitempty"`
	PropagationPolicy  string   `json:"propagationPolicy,omitempty"`
	GracePeriodSeconds *int64   `json:"gracePeriodSeconds,omitempty"`
	DryRun             []string `json:"dryRun,omitempty"`
}

// body is the DeleteOptions object sent with a delete; nil when no option
// is set, so a plain delete sends no body.
func (o DeleteOptions) body() []byte {
	if o.Preconditions == (Preconditions{}) && o.Propagation == "" && o.GracePeriodSeconds == nil && !o.DryRun {
		return nil
	}
	d := deleteBody{Kind: "DeleteOptions", APIVersion: "v1", PropagationPolicy: string(o.Propagation),
		GracePeriodSeconds: o.GracePeriodSeconds}
	if p := o.Preconditions; p != (Preconditions{}) {
		d.Preconditions = &struct {
			UID             string `json:"uid,omitempty"`
			ResourceVersion string `json:"resourceVersion,omitempty"`
		}{p.UID, p.ResourceVersion}
	}
	if o.DryRun {
		d.DryRun = []string{"All"}
	}
	b, _ := json.Marshal(d) // plain strings and numbers: cannot fail
	return b
}
