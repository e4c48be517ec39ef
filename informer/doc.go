// Package informer keeps a local, indexed, always-consistent copy of one
// Kubernetes resource from a list and a resumed watch, and calls handlers
// for every change.
//
// The protocol, as a state machine (state.go, one transition function per
// outcome in resume.go, which owns every resourceVersion decision):
//
//	start ──► streaming list (watch?sendInitialEvents) ──end bookmark──► watch
//	  │             │ server without support                               │
//	  └──────────► paginated list (RV "0", 500 a page) ──commit──────────► │
//	                 ▲  410 on watch: relist from the last RV (jittered)   │
//	                 └─────────────────────────────────────────────────────┘
//	watch: clean end or idle deadline ─► watch again from the last RV at once
//	       429/5xx/network/bad frame   ─► watch again from the last RV after
//	                                      Retry-After or backoff
//	list:  410 ─► list again from RV "" (an expired continue token: one full list)
//
// Guarantees:
//   - The store only ever holds a state the server had: a relist is built
//     aside, page by page, and swapped in atomically.
//   - Deletes are never lost: one missed while disconnected is found by the
//     next relist and delivered with finalStateUnknown set.
//   - Bookmarks advance the resourceVersion, so a resumed watch starts inside
//     the server's history window.
//   - A watch that receives no byte for Options.IdleTimeout is presumed dead
//     and resumed, even over HTTP/1.1 where there are no pings.
//   - Each handler has its own goroutine and its own queue. Changes to one
//     key coalesce while the handler is busy (it gets one call from the state
//     it saw to the newest), so its backlog is bounded by the number of
//     objects, a slow handler delays no other, and the watch keeps reading.
//   - Run owns every goroutine the informer starts and waits for them all
//     before it returns; New starts none.
//
// Typical use:
//
//	inf, err := informer.New(informer.Options[*corev1.Pod]{Client: c, Resource: watch.Pods})
//	inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{AddFunc: ..., UpdateFunc: ..., DeleteFunc: ...}, informer.HandlerOptions{})
//	go inf.Run(ctx)
//	inf.WaitForSync(ctx)
//	pods, _ := inf.Store().ByIndex(store.NamespaceIndex, "default")
package informer
