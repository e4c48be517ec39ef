// Package controller is kwatch's controller layer: a Manager that owns
// the shared informers, the connection and the controllers of a process,
// typed cache reads, and controllers built from a primary resource (For),
// the objects it owns (Owns) and any other mapped resource (Watches),
// with predicates, a rate-limited queue per controller and reconcilers.
//
//	mgr, _ := controller.NewManager(c, controller.ManagerOptions{})
//	pods, _ := controller.Cache[*corev1.Pod](mgr, kube.Pods)
//	controller.New(mgr, controller.Config[*appsv1.ReplicaSet]{
//		Name: "replicaset", For: kube.ReplicaSets,
//		Owns:      []controller.Source{controller.Owns[*corev1.Pod](kube.Pods)},
//		Reconcile: reconcile,
//	})
//	mgr.Run(ctx)
//
// Guarantees:
//   - One informer per (object type, resource, Scope) in a manager, shared
//     by every controller and reader; the manager's one kube.Client (one
//     identity, one cluster) and its token bucket serve them all. A Scope
//     (namespace, label and field selectors) narrows a cache; the zero
//     Scope is the manager's namespace.
//   - A controller's workers start only after every informer it uses has
//     synced: a reconcile never runs against a half-filled cache.
//   - Owns maps an owned object to its controlling owner from the object's
//     own ownerReferences (controller: true, the primary's kind and
//     group), so an event that arrives before its owner is cached still
//     enqueues the owner; an object that changes owner enqueues both.
//   - One key is never reconciled by two workers at once; keys added
//     while one runs are reconciled again after it (package queue).
//   - An error retries the key with per-key backoff; Terminal(err) does
//     not. A panic is recovered and retried.
//   - Cache reads wait for the first sync and return copies: a caller may
//     change what it reads.
//   - Run shuts down in order: controllers stop taking work and in-flight
//     reconciles finish within ShutdownTimeout (they may still read the
//     caches), then the informers stop. Run returns after every goroutine
//     it started has ended. A controller that fails stops the manager.
//   - With ManagerOptions.LeaderElection, Run campaigns for a Lease
//     (package leader): the caches fill at once, the controllers run only
//     while this process leads and stop when the Lease is lost, and the
//     Lease is released after they stopped, so the next replica takes over
//     within one retry period rather than a lease duration.
//   - With ManagerOptions.Sharding, the process is one replica of a ring
//     (package shard): every controller runs on every replica, and a key
//     is reconciled only on the replica the ring gives it to, never on
//     two at once; its queue still receives every key, drops the others
//     and, when the replica gains keys, enqueues every key of its primary
//     cache it now owns. Owned objects map to their owner's key, so they
//     follow it. In shard.Label mode the primary objects carry their
//     owner's label and each replica caches only its own and the
//     unlabelled ones; a reconcile reads the primary through
//     CacheIn(m, res, m.ShardScope(scope)).
//   - Handler serves /healthz, /readyz (every informer synced, watching
//     and heard from within DefaultStaleAfter) and /metrics.
//
// Logs carry the controller's name and the key (slog); metrics are the
// queue's workqueue_* and kwatch_reconcile_* series, labelled with the
// controller's name, on ManagerOptions.Metrics.
package controller
