// Package kwatchtest runs a simulated Kubernetes API server for the tests of
// code built on kwatch, or on any other Kubernetes client: it starts in
// milliseconds in the test's process, speaks the real wire protocol closely
// enough that kubectl, client-go and controller-runtime cannot tell it from a
// kube-apiserver for get, list, watch, create, update, patch and delete, and it
// injects the faults that break controllers in production.
//
//	srv := kwatchtest.Start(t, kwatchtest.Options{})      // stopped by t.Cleanup
//	srv.MustApply(`apiVersion: v1
//	kind: ConfigMap
//	metadata: {namespace: demo, name: settings}
//	data: {mode: fast}`)
//	c := srv.Client()                                     // kwatch (kube.NewClient(srv.Config()))
//	cfg, err := clientcmd.BuildConfigFromFlags("", srv.Kubeconfig()) // client-go
//	cut := srv.CutWatch(kwatchtest.FaultOptions{Resource: "pods", AfterEvents: 1})
//	err = cut.Wait(ctx)                                   // returns once the watch was cut
//
// What it guarantees:
//
//   - Lists, watches and writes follow the real server's resourceVersion
//     semantics: one global resourceVersion, pagination with continue tokens,
//     watches resumable from any resourceVersion in the history (410 Gone when
//     older), bookmarks, streaming lists (sendInitialEvents), label and field
//     selectors, optimistic concurrency (409 Conflict), server-side apply,
//     status and scale subresources, generation bumped on spec changes only.
//     The simulator's conformance suite runs the same cases against a real
//     kube-apiserver and etcd.
//   - Objects are seeded with Apply (YAML or JSON documents, or any value that
//     marshals to an object with kind and apiVersion, such as a typed
//     k8s.io/api object), Create (any object, given its resource), PutPod and
//     LoadPods (generated pods with realistic 3-4 KB bodies). Seeding writes
//     status as given, as a kubelet or controller would; clients' creates
//     through the API get the real server's initial status.
//   - The server's state is read back with Get and List (JSON, or decoded into
//     the caller's type with Object.Into and ListInto), never through a cache:
//     it is what the next list would return.
//   - Every fault counts when the server applies it, not when it is queued:
//     Fault.Wait returns once a watch was cut, an error answered, a body split,
//     so a test waits for the fault instead of sleeping. Compact,
//     ExpireContinueTokens and Restart are done when they return.
//   - Plain HTTP (HTTP/1.1, chunked watches) or, with Options.TLS, TLS with
//     HTTP/2 and a certificate made in memory that Config and Kubeconfig trust.
//   - Deletes behave as the real server's: an object with finalizers gets
//     deletionTimestamp and stays until a write clears them (no finalizer may be
//     added meanwhile); a pod bound to a node (spec.nodeName) is deleted
//     gracefully, deletionTimestamp its grace period ahead (30 s by default), and
//     stays until a delete with grace period 0, the kubelet's; propagationPolicy
//     Foreground and Orphan add the garbage collector's finalizers. Delete (the
//     in-process one) removes at once. Options.GarbageCollect adds what
//     kube-controller-manager's garbage collector does.
//   - Start's server stops at t.Cleanup, ending every watch, and waits for each
//     goroutine it started; nothing outlives the test. Run(t, mgr.Run) runs
//     the code under test (a controller manager, an informer) the same way:
//     until the test ends, waited for before the server stops. Outside a test (an
//     Example, a TestMain, a demo program) Serve(ctx, opts) starts the same
//     server, which serves until ctx ends or Close, and Close waits for it.
//   - Churn keeps generated pods changing (creates, updates, deletes at a
//     rate) in the caller's goroutine, for a controller to follow.
//   - Webhooks are called as the real server calls them: a client's
//     writes go to the admission webhooks of the ValidatingWebhookConfigurations
//     and MutatingWebhookConfigurations applied to it (clientConfig.url with
//     its caBundle, rules, selectors, failurePolicy, timeoutSeconds, dry
//     runs), and a CustomResourceDefinition applied makes its resource served,
//     its other versions through its conversion webhook; so a test exercises
//     a controller's webhooks (package webhook) in milliseconds. Seeding
//     with Apply and Create stands for controllers and skips admission.
//
// What it does not do: no controllers run in it but the optional garbage
// collector (a Deployment makes no
// ReplicaSet, no scheduler binds pods, no kubelet runs them), built-in
// validation goes only as far as names and data keys, and custom resources
// without a CRD must be registered by the simulator (the default resources are pods, namespaces,
// configmaps, secrets, events, services, nodes, deployments, replicasets,
// statefulsets and leases).
package kwatchtest
