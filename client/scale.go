package client

import (
	"context"
	"net/http"
	"strconv"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// Scale is the autoscaling/v1 Scale of a scalable resource (deployments,
// replicasets, statefulsets, custom resources with a scale subresource).
type Scale struct {
	APIVersion string      `json:"apiVersion,omitempty"`
	Kind       string      `json:"kind,omitempty"`
	Metadata   objectMeta  `json:"metadata"`
	Spec       ScaleSpec   `json:"spec"`
	Status     ScaleStatus `json:"status"`
}

// ScaleSpec is the desired replica count.
type ScaleSpec struct {
	Replicas int32 `json:"replicas"`
}

// ScaleStatus is the observed replica count and the label selector of
// the replicas, in string form.
type ScaleStatus struct {
	Replicas int32  `json:"replicas"`
	Selector string `json:"selector,omitempty"`
}

// objectMeta is the metadata Scale carries.
type objectMeta struct {
	Name              string `json:"name,omitempty"`
	Namespace         string `json:"namespace,omitempty"`
	UID               string `json:"uid,omitempty"`
	ResourceVersion   string `json:"resourceVersion,omitempty"`
	CreationTimestamp string `json:"creationTimestamp,omitempty"`
}

// GetNamespace, GetName, GetResourceVersion and GetAnnotations make
// *Scale a watch.Object.
func (s *Scale) GetNamespace() string              { return s.Metadata.Namespace }
func (s *Scale) GetName() string                   { return s.Metadata.Name }
func (s *Scale) GetResourceVersion() string        { return s.Metadata.ResourceVersion }
func (s *Scale) GetAnnotations() map[string]string { return nil }

var _ watch.Object = (*Scale)(nil)

// GetScale reads the scale subresource of ns/name.
func (r *Client[T]) GetScale(ctx context.Context, ns, name string) (*Scale, error) {
	if err := r.checkTarget(ns, name); err != nil {
		return nil, err
	}
	return r.scaleCall(ctx, call{op: "get scale", method: http.MethodGet, ns: ns, name: name, sub: "scale"})
}

// SetScale sets the desired replicas of ns/name through its scale
// subresource (a merge patch of spec.replicas: no read needed, no
// conflict possible) and returns the Scale after it.
func (r *Client[T]) SetScale(ctx context.Context, ns, name string, replicas int32, opts WriteOptions) (*Scale, error) {
	if err := r.checkTarget(ns, name); err != nil {
		return nil, err
	}
	if replicas < 0 {
		return nil, inputErr("replicas", "replicas %d is negative", replicas)
	}
	body := []byte(`{"spec":{"replicas":` + strconv.Itoa(int(replicas)) + `}}`)
	return r.scaleCall(ctx, call{op: "scale", method: http.MethodPatch, ns: ns, name: name, sub: "scale",
		query: opts.query(r.manager), body: body, ctype: string(MergePatch), repeatable: true})
}

func (r *Client[T]) scaleCall(ctx context.Context, cl call) (*Scale, error) {
	scales := &Client[*Scale]{c: r.c, res: r.res, manager: r.manager, accept: kube.ContentTypeJSON}
	return scales.do(ctx, cl)
}
