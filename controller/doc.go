// Package controller is kwatch's controller layer: a Manager that owns
// the shared informers, the connection and the controllers of a process,
// typed cache reads, and controllers built from a primary resource (For),
// the objects it owns (Owns) and any other mapped resource (Watches),
// with predicates, a rate-limited queue per controller and reconcilers.
//
//	var (
//		Pods        = kube.Typed[*corev1.Pod](kube.Pods)
//		ReplicaSets = kube.Typed[*appsv1.ReplicaSet](kube.ReplicaSets)
//	)
//
//	mgr, _ := controller.NewManager(c, controller.ManagerOptions{})
//	pods, _ := controller.Cache(mgr, Pods)
//	controller.New(mgr, controller.Config[*appsv1.ReplicaSet]{
//		Name: "replicaset", For: ReplicaSets,
//		Owns:      []controller.Source{controller.Owns(Pods)},
//		Reconcile: reconcile,
//	})
//	mgr.Run(ctx)
//
// Guarantees:
//   - One informer per (object type, resource, kube.Scope) in a manager,
//     shared by every controller and reader; the manager's one kube.Client
//     (one identity, one cluster) and its token bucket serve them all. A
//     scope (namespace, label and field selectors) narrows a cache, and is
//     validated before the cache is built; the zero scope is the
//     manager's namespace.
//   - Caches keep the informer's default store, the compact one (encoded
//     objects, decoded on read through a cache sized by use);
//     ManagerOptions.InformerTuning (an informer.Tuning by resource) with
//     Store: informer.StoreTyped asks for the typed one.
//   - A controller's workers start only after every informer it uses has
//     synced: a reconcile never runs against a half-filled cache.
//   - Owns maps an owned object to its controlling owner from the object's
//     own ownerReferences (controller: true, the primary's kind and
//     group), so an event that arrives before its owner is cached still
//     enqueues the owner; an object that changes owner enqueues both.
//   - Priorities: keys from an informer's initial list and from resyncs
//     are queued at queue.PriorityLow, changes (adds after the list,
//     updates, deletes, an owned object's change, an owner move) at
//     queue.PriorityNormal; a key keeps its priority across error retries
//     and RequeueAfter, and a key waiting low moves up when its object
//     changes. A low key waits at most queue.DefaultMaxLowWait (10s) while
//     changes keep coming, plus the time for the older aged low keys
//     ahead of it (package queue). A restart's full list therefore never
//     delays the reaction to a change, and is not starved by changes.
//   - Owner index: Owns indexes the owned objects by their controller
//     owner's uid (OwnerIndex; in a compact cache from the encoded
//     metadata, without decoding), and Reader.Owned(ctx, owner) returns
//     the objects owner controls, matched by uid, without scanning a
//     namespace. The index exists when the cache is built after the
//     controller (create controllers before reading their caches);
//     otherwise Owned scans the owner's namespace and the manager logs a
//     warning. SetControllerReference fills the controller reference Owns
//     follows, and refuses an object another owner controls
//     (*AlreadyOwnedError).
//   - One key is never reconciled by two workers at once; keys added
//     while one runs are reconciled again after it (package queue).
//   - An error retries the key with per-key backoff; Terminal(err) does
//     not. A panic is recovered and retried.
//   - Config.ReconcileObject is a reconcile with its first read done: it
//     gets a copy of the key's primary object, read from the For cache
//     once the key passed the same gates as a Reconcile (the shard, the
//     wait for this process's writes, the fence). It is not called for a
//     key whose object is gone or never was; an object held by a
//     finalizer is passed, deletionTimestamp set. Cleanup after a delete
//     without a finalizer takes Reconcile, which gets every key.
//   - Cache reads wait for the first sync and return copies: a caller may
//     change what it reads.
//   - Run shuts down in order: controllers stop taking work and in-flight
//     reconciles finish within ShutdownTimeout (they may still read the
//     caches), then the informers stop. Run returns after every goroutine
//     it started has ended. A controller that fails stops the manager.
//   - With ManagerOptions.LeaderElection, Run campaigns for a Lease
//     (package leader): the caches fill at once, the controllers run only
//     while this process leads, and the Lease is released after they
//     stopped, so the next replica takes over within one retry period
//     rather than a lease duration (after a write that was cut off or
//     came back without a known outcome, the margin LeaseDuration -
//     RenewDeadline after it, then a retry period: fence.go).
//   - A lost Lease (fence.go holds the whole answer): at the renew
//     deadline, by the local monotonic clock and a timer rather than the
//     elector's loop, every in-flight reconcile's context is cancelled at
//     once, no reconcile starts, and every write through Manager.Client
//     is refused before it is sent with a *kube.FencedError
//     (kube.IsFenced; kwatch_fenced_writes_total). ShutdownTimeout plays
//     no part: it bounds an ordinary shutdown, while the Lease is still
//     renewed. The deadline comes LeaseDuration - RenewDeadline (5 s by
//     default) before another replica can lead, under package leader's
//     clock-rate assumption; that margin is also what covers a write
//     already on the wire when the fence closes (it must reach the server
//     within it), and a release of the Lease, or a sharded key's
//     handover, waits it after a write that was cut off or came back
//     without a known outcome. A sharded replica is fenced the same way, and its
//     writes also for keys it does not own now: the write's context (the
//     reconcile's, which carries its key) names the key, and the member
//     says whether it is in flight here or may start here. Pass the
//     reconcile's context to its writes; a write without one is checked
//     against the Lease only. Reads, events and the *kube.Client given
//     to NewManager are not fenced.
//   - With ManagerOptions.Sharding, the process is one replica of a ring
//     (package shard): every controller runs on every replica, and a key
//     is reconciled only on the replica the ring gives it to, never on
//     two at once; its queue still receives every key, drops the others
//     and, when the replica gains keys, enqueues every key of its primary
//     cache it now owns, at low priority, as an initial list (a key
//     dropped during its handover goes at normal priority). Owned objects map to their owner's key, so they
//     follow it. In shard.Label mode the primary objects carry their
//     owner's label and each replica caches only its own and the
//     unlabelled ones; a reconcile reads the primary through
//     CacheIn(m, res, m.ShardScope(scope)).
//   - Expectations (expect.go): a write made through the manager's
//     client (Manager.Client) with a reconcile's context is recorded
//     against that controller's key. The key's next reconcile runs only
//     once every cache of the manager that holds the written object shows
//     the resourceVersion the server returned (or a later one), and, for
//     a delete, no longer holds that uid or shows it with a
//     deletionTimestamp. Until then the key is parked without a worker and
//     queued again by the cache event that shows its last write, or within
//     a second of a cache coming to show it with no event of the object (a
//     bookmark, a relist past it); other keys run; a failed key's retry
//     that is parked keeps its backoff.
//     The wait ends 30 s after the key's last write at most
//     (ManagerOptions.ExpectationTimeout; kwatch_expectation_timeouts_total
//     counts it, a warning names the key and what was not seen). A write
//     no cache holds (another resource, out of every cache's scope, a field
//     selector on more than name and namespace) is not waited for, nor a
//     dry run or a DeleteCollection, nor a write the server refused.
//   - A write of unknown outcome (the connection broke while it was out,
//     its answer could not be read, a 500 or a 504: the server may have
//     done it, or may still do it after the client gave up) holds the key
//     for 75 s, until the server can no longer apply it (kube-apiserver's
//     default 60 s request timeout, and a margin for a storage write
//     already on its way when that passed), and then until every cache of
//     its resource in its namespace passed the server's resourceVersion
//     read at that time, bounded by 30 s from that read. So a create
//     whose answer was lost, or that the server commits after it answered
//     504, is not made again (generateName included). Nothing read sooner
//     could tell: an object not there yet may still come. The read is made
//     by the worker that takes the key, no goroutine per write. Limits: a
//     server whose request timeout is longer than 60 s, or a proxy that
//     forwards the request after the client gave up, may apply it later
//     than the wait; a resourceVersion that is not a decimal number or is
//     below one a cache shows (an aggregated server's may be either) is
//     not used, and the key waits for the bound; and where the server's
//     resourceVersion moves on through other objects (kube-apiserver's is
//     one for the whole cluster), a cache passes it only by an event of
//     its own scope or a bookmark (about one a minute), so the second
//     wait often ends at its bound, with the warning, on a cache that
//     shows the write by then unless it lags by more than the bound.
//   - Read-your-own-writes: a Reader's Get of an object this process wrote
//     through the manager's client returns that version or a later one:
//     it waits, bounded by the context and the same 30 s (then a
//     *NotShownError, which a later Get gets at once until the cache shows
//     the write or this process writes the object again). A cache the
//     write is not recorded against (out of its scope, or built after
//     it) is waited for while it holds the object older than the write. A
//     write of unknown outcome is not waited for, nor a few cases of
//     caches behind another writer (expect.go). List does not wait.
//   - Handler serves /healthz, /readyz (every informer synced, watching
//     and heard from within DefaultStaleAfter) and /metrics.
//
// Logs carry the controller's name and the key (slog): LoggerFrom(ctx) in
// a reconcile is the manager's logger with both. Metrics are the queue's
// workqueue_* (with per-priority depth and wait) and kwatch_reconcile_*
// series, labelled with the controller's name, on ManagerOptions.Metrics.
// Setup is the start of a main: signals, the kubeconfig or in-cluster
// config, and a client. ListOptions take a label selector as a string, a
// labels.Selector or an object's metav1.LabelSelector.
package controller
