// Package client reads and writes Kubernetes objects: typed Get, List,
// Create, Update, Patch, Apply and Delete, on the connection of package
// kube (its credentials, its rate limit, its typed errors) and the codecs
// of package watch, without client-go.
//
//	var Pods = kube.Typed[*corev1.Pod](kube.Pods)
//	pods := client.For(c, Pods, client.Options{})
//	pod, err := pods.Get(ctx, "default", "web", client.GetOptions{})
//
// A Client[T] names its resource and type once (a kube.TypedResource,
// of a kube.Resource written out or found by c.Resolve) and takes the object types the informer takes: a
// typed k8s.io/api object, a slim struct holding only the fields the
// caller uses, *unstructured.Unstructured. Bodies are JSON; apiVersion and
// kind are filled in from the resource when the object leaves them empty,
// and an object of another kind or version is refused.
//
// # Verbs
//
//   - Get (optionally a subresource), List (one page; see watch.ListEach
//     for streaming), Create, Update and UpdateStatus (with
//     metadata.resourceVersion set the server refuses a stale update with a
//     409), Patch (MergePatch, JSONPatch, StrategicMergePatch for built-in
//     types), Apply (server-side apply: field manager, Force; see Apply for
//     what a typed object claims), Delete (preconditions on uid and
//     resourceVersion, propagation, grace period) and DeleteCollection of
//     a kube.Scope; GetScale and SetScale for the scale subresource; any named
//     subresource through the options' Subresource.
//   - Every write takes DryRun and a FieldManager; a write that names none
//     uses the Client's, by default DefaultFieldManager (the program's
//     name).
//
// # Errors and retries
//
// Bad input (no name, no namespace for a namespaced resource, a namespace
// for a cluster-scoped one, an object of the wrong kind, a malformed
// patch) is an *InputError before anything is sent. Every answer that is
// not 2xx is a *kube.StatusError inside a *kube.OpError naming the
// operation and object: kube.IsConflict, IsNotFound, IsAlreadyExists,
// IsInvalid (StatusError.Causes name the failing fields) drive the caller;
// an answer that does not decode is a *watch.DecodeError, never a panic.
// Modify and RetryOnConflict re-read, re-apply the change and try again on
// a conflict.
//
// Requests wait for the kube.Client's token bucket. A 429, or a 503 with
// Retry-After, is retried after the server's wait only for requests that
// are safe to repeat: reads, updates and deletes guarded by a
// resourceVersion or uid precondition, applies, scale patches. A create
// is never silently sent twice.
//
// # Protobuf
//
// By default (Options.Encoding Auto) a T with a generated Marshal (every
// k8s.io/api type) has its creates and updates sent in protobuf, and a T
// with a generated Unmarshal asks for protobuf answers, as client-go's
// typed clients do, unless the kube.Config's Encoding.ContentType is JSON.
// Measured against the simulator (internal/bench/results/writes.md),
// protobuf bodies cost kwatch's client 0.52-0.69x the allocations of JSON
// ones and 0.86-0.96x the CPU for pods. Patches and applies are JSON (or YAML) by
// definition; the server answers custom resources in JSON whatever is
// asked, and the client decodes either. Encoding JSON or Protobuf forces
// one.
package client
