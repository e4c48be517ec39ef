package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/kwatch/kwatch/internal/pbwire"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// Get reads the object ns/name (ns "" for a cluster-scoped resource).
func (r *Client[T]) Get(ctx context.Context, ns, name string, opts GetOptions) (T, error) {
	var zero T
	if err := r.checkTarget(ns, name); err != nil {
		return zero, err
	}
	q := url.Values{}
	if opts.ResourceVersion != "" {
		q.Set("resourceVersion", opts.ResourceVersion)
	}
	return r.do(ctx, call{op: "get", method: http.MethodGet, ns: ns, name: name, sub: opts.Subresource, query: q})
}

// List reads one page of the objects in sc (a namespace, "" for all, and
// the selectors, which the server judges).
func (r *Client[T]) List(ctx context.Context, sc kube.Scope, opts watch.ListOptions) (*watch.ListPage[T], error) {
	if err := r.checkNamespace(sc.Namespace, false); err != nil {
		return nil, err
	}
	return watch.List[T](ctx, r.c, r.res, sc, opts)
}

// Create creates obj in its metadata.namespace and returns the server's
// object. It is never sent twice: after a 429 or 503 the error is
// returned, as a create that may have happened cannot be repeated safely.
func (r *Client[T]) Create(ctx context.Context, obj T, opts CreateOptions) (T, error) {
	var zero T
	ns := obj.GetNamespace()
	if err := r.checkNamespace(ns, true); err != nil {
		return zero, err
	}
	name := ""
	if opts.Subresource != "" {
		name = obj.GetName()
		if err := checkName(name); err != nil {
			return zero, err
		}
	}
	body, ctype, err := r.encode(obj)
	if err != nil {
		return zero, err
	}
	return r.do(ctx, call{op: "create", method: http.MethodPost, ns: ns, name: name, sub: opts.Subresource,
		query: opts.query(r.manager), body: body, ctype: ctype})
}

// Update replaces obj (or its subresource) and returns the server's
// object. With metadata.resourceVersion set, the server refuses the update
// with a 409 Conflict when the object changed since (kube.IsConflict):
// re-read and try again, as RetryOnConflict does; without it, the update
// overwrites whatever is stored. Only an update with a resourceVersion is
// sent again after a 429 or 503.
func (r *Client[T]) Update(ctx context.Context, obj T, opts UpdateOptions) (T, error) {
	var zero T
	ns, name := obj.GetNamespace(), obj.GetName()
	if err := r.checkTarget(ns, name); err != nil {
		return zero, err
	}
	body, ctype, err := r.encode(obj)
	if err != nil {
		return zero, err
	}
	return r.do(ctx, call{op: "update", method: http.MethodPut, ns: ns, name: name, sub: opts.Subresource,
		query: opts.query(r.manager), body: body, ctype: ctype, repeatable: obj.GetResourceVersion() != ""})
}

// UpdateStatus replaces the status of obj through the status subresource;
// the rest of obj is ignored by the server.
func (r *Client[T]) UpdateStatus(ctx context.Context, obj T, opts WriteOptions) (T, error) {
	return r.Update(ctx, obj, UpdateOptions{WriteOptions: opts, Subresource: "status"})
}

// Patch applies a patch of type pt to ns/name (or its subresource) and
// returns the server's object.
func (r *Client[T]) Patch(ctx context.Context, ns, name string, pt PatchType, patch []byte, opts PatchOptions) (T, error) {
	var zero T
	if err := r.checkTarget(ns, name); err != nil {
		return zero, err
	}
	if err := checkPatch(pt, patch); err != nil {
		return zero, err
	}
	return r.do(ctx, call{op: "patch", method: http.MethodPatch, ns: ns, name: name, sub: opts.Subresource,
		query: opts.query(r.manager), body: patch, ctype: string(pt), repeatable: opts.Repeatable})
}

// Apply sends obj as a server-side apply configuration: the server merges
// the fields obj sets into the stored object (creating it if needed),
// records them as owned by the field manager, and answers 409 Conflict
// (kube.IsConflict; StatusError.Causes name the fields and their owners)
// when another manager owns one of them with another value, unless Force.
// obj should set only the fields the manager owns: every field it encodes
// is claimed, so a typed object's zero values (an empty resources: {},
// creationTimestamp: null) are claimed too. An unstructured map or a slim
// struct with omitempty fields says exactly what is meant. Apply is
// declarative, so it is sent again after a 429 or 503.
func (r *Client[T]) Apply(ctx context.Context, obj T, opts ApplyOptions) (T, error) {
	var zero T
	ns, name := obj.GetNamespace(), obj.GetName()
	if err := r.checkTarget(ns, name); err != nil {
		return zero, err
	}
	if r.res.Kind == "" {
		return zero, inputErr("kind", "apply needs the kind of %s: the resource has no Kind", r.res)
	}
	body, err := encodeJSON(obj, r.res)
	if err != nil {
		return zero, err
	}
	q := WriteOptions{FieldManager: opts.FieldManager, DryRun: opts.DryRun}.query(r.manager)
	if q.Get("fieldManager") == "" {
		return zero, inputErr("field manager", "apply needs a field manager")
	}
	if opts.Force {
		q.Set("force", "true")
	}
	return r.do(ctx, call{op: "apply", method: http.MethodPatch, ns: ns, name: name, sub: opts.Subresource,
		query: q, body: body, ctype: string(ApplyPatch), repeatable: true})
}

// Delete deletes ns/name. The server may keep the object for a while
// (finalizers, a pod's grace period, foreground propagation): watch for
// the DELETED event to know it is gone. A delete is sent again after a 429
// or 503 only with a precondition.
func (r *Client[T]) Delete(ctx context.Context, ns, name string, opts DeleteOptions) error {
	if err := r.checkTarget(ns, name); err != nil {
		return err
	}
	return r.deleteCall(ctx, call{op: "delete", method: http.MethodDelete, ns: ns, name: name}, opts)
}

// DeleteCollection deletes the objects in sc (a namespace, "" for all;
// without selectors every object there).
func (r *Client[T]) DeleteCollection(ctx context.Context, sc kube.Scope, opts DeleteOptions) error {
	if err := r.checkNamespace(sc.Namespace, false); err != nil {
		return err
	}
	q := url.Values{}
	sc.SetQuery(q)
	return r.deleteCall(ctx, call{op: "deletecollection", method: http.MethodDelete, ns: sc.Namespace, query: q}, opts)
}

func (r *Client[T]) deleteCall(ctx context.Context, cl call, opts DeleteOptions) error {
	if opts.Propagation != "" && opts.Propagation != Orphan && opts.Propagation != Background && opts.Propagation != Foreground {
		return inputErr("propagation", "propagation policy %q is not Orphan, Background or Foreground", opts.Propagation)
	}
	if opts.DryRun {
		if cl.query == nil {
			cl.query = url.Values{}
		}
		cl.query.Set("dryRun", "All")
	}
	if cl.body = opts.body(); cl.body != nil {
		cl.ctype = kube.ContentTypeJSON
	}
	cl.repeatable = opts.Preconditions != (Preconditions{})
	resp, err := r.send(ctx, cl)
	if err != nil {
		if cl.name != "" {
			r.uncertain(ctx, cl, err)
		}
		return err
	}
	// Read the answer (the object or a Status) whole, so the connection
	// is reused.
	body, err := readBody(resp)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		err = r.opError(cl, fmt.Errorf("reading the answer: %w", err))
		if cl.name != "" {
			r.uncertain(ctx, cl, err)
		}
		return err
	}
	if cl.name != "" && !opts.DryRun {
		r.c.RecordWrite(ctx, r.deleted(cl, body, resp.Header.Get("Content-Type")))
	}
	return nil
}

// deleted is what a delete's answer tells the client's WriteRecorder: the
// object's uid and version when the answer is the object, the name and
// the uid the Status names when it is a Status (kube-apiserver's answer to
// an immediate delete of most built-in resources). Without the uid the
// recorder could only guess which incarnation of the name went.
func (r *Client[T]) deleted(cl call, body []byte, ctype string) kube.Written {
	w := kube.Written{Resource: r.res, Namespace: cl.ns, Name: cl.name, Deleted: true}
	if len(body) > maxObjectBody {
		return w
	}
	if obj, err := watch.DecodeObjectAliasing[T](r.c, body, ctype); err == nil && obj.GetName() == cl.name {
		return written(r.res, obj, true)
	}
	if d, ok := statusDetails(body, ctype); ok && d.Name == cl.name {
		w.UID = d.UID
	}
	return w
}

// statusDetails reads the details of a Status answer, JSON or enveloped
// protobuf; ok is false when body is not one.
func statusDetails(body []byte, ctype string) (kube.StatusDetails, bool) {
	protobuf := kube.IsProtobuf(ctype)
	if protobuf {
		env, err := pbwire.Unwrap(body)
		if err != nil || env.Kind != "Status" {
			return kube.StatusDetails{}, false
		}
		body = env.Raw
	}
	se, err := kube.DecodeStatus(body, protobuf)
	if err != nil {
		return kube.StatusDetails{}, false
	}
	return se.Details, true
}

// encode is the body of a create or update: protobuf when asked and T has
// a generated Marshal, JSON otherwise.
func (r *Client[T]) encode(obj T) ([]byte, string, error) {
	if r.proto {
		b, err := encodeProtobuf(any(obj).(ProtobufMarshaler), r.res)
		return b, kube.ContentTypeProtobuf, err
	}
	b, err := encodeJSON(obj, r.res)
	return b, kube.ContentTypeJSON, err
}
