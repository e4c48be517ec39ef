// Package informer keeps a local, indexed, always-consistent copy of one
// Kubernetes resource from a list and a resumed watch, and calls handlers
// for every change.
//
// The protocol, as a state machine (state.go, one transition function per
// outcome in resume.go, which owns every resourceVersion and retry
// decision):
//
//	start ──► streaming list (watch?sendInitialEvents) ──end bookmark──► watch
//	  │             │ not honoured (ListAuto: paged from then on, same RV) │
//	  └──────────► paginated list (RV "0", from the server's cache) ─────► │
//	                 ▲  410 on watch: relist from the last RV (jittered)   │
//	                 │  504 ResourceVersionTooLarge: relist from ""        │
//	                 └─────────────────────────────────────────────────────┘
//	watch: our own timeoutSeconds passed ─► watch again from the last RV at once
//	       ended early (cut, server restart, idle deadline, 429/5xx, bad frame)
//	           ─► confirm: list 1 item at the last RV, NotOlderThan
//	              at once if the stream worked (delivered events or stayed
//	              open a second), else after Retry-After or backoff
//	confirm: the server has the RV ─► watch from it
//	         504 ResourceVersionTooLarge (the server is behind us), an older
//	         RV in the answer, a refusal, or 3 timeouts in a row ─► list ""
//	list:  410 ─► list again from RV "" (an expired continue token: one full list)
//
// The first paginated list asks for RV "0": the real server answers it from
// its watch cache, whole (it ignores limit there), which is what keeps a
// fleet of restarting clients off etcd. Later lists page by PageSize.
//
// Guarantees:
//   - Once the store reports resourceVersion N, every object in it is the
//     server's state at N, and every object the server had at N is in it
//     unless the informer refused it (Transform failed, or the store could
//     not key or index it); a refused object is absent, never an older
//     version (apply.go). A relist is built aside and swapped in atomically.
//   - Deletes are never lost: one missed while disconnected is found by the
//     next relist and delivered with finalStateUnknown set.
//   - A watch is never resumed from an RV the server has not reached: after
//     any early end, the server confirms the RV first. The real server
//     answers a watch from a future RV with a silent stream, so without the
//     confirmation a restored server would leave the cache stale for good.
//     Found behind, it is relisted from "", every kept object reported as
//     updated (it reuses RVs). A confirmation refused, or timing out three
//     times in a row, ends in a relist too. A restored server that has
//     already written past our RV when asked cannot be told apart by RV; the
//     restore must move etcd's revision forward and compact for a 410.
//   - Bookmarks advance the resourceVersion, so a resumed watch starts inside
//     the server's history window.
//   - A watch that receives no byte for Options.IdleTimeout is presumed dead
//     and resumed, even over HTTP/1.1 where there are no pings.
//   - Backoff is for attempts that fail; a stream that worked and broke
//     resumes at once, and only a working stream resets the backoff, so a
//     server that cuts every stream, answers every watch with 410 or every
//     list from "" with 504 still meets it.
//   - Each handler has its own goroutine and its own queue. By default
//     (Coalesce) changes to one key coalesce while the handler is busy (it
//     gets one call from the state it saw to the newest), so its backlog is
//     bounded by the number of objects, a slow handler delays no other, and
//     the watch keeps reading. An Ordered handler gets one call per change
//     instead, in the order applied (after a relist, the computed
//     difference), through a buffer of HandlerOptions.Buffer changes; past
//     it, changes coalesce until the handler catches up (OverflowCoalesce),
//     and Registration.Merged counts what it never saw.
//   - Options.Form watch.FormTable lists and watches the server's printed
//     Table (kubectl's columns) instead of objects; T decodes one row with
//     its metadata (or, with FormTableObject, its whole object).
//   - Readers get a store.View: only the informer writes to its cache.
//   - Options.Store picks how the cache holds objects: as the server
//     encoded them, decoded on read through a cache of decoded objects
//     sized by use (StoreCompact, the default: a fraction of the memory
//     and of the garbage collector's work; a KeyHandler never decodes; a
//     handler added with HandlerOptions.NoOld decodes only the new object
//     of an update; a repeated List of unchanged objects decodes
//     nothing), or decoded into T on arrival (StoreTyped, which the
//     default picks by itself for a Transform or a Table). compact.go
//     says what else changes. Objects from either store are shared: a
//     reader or handler may keep them and must not modify them.
//   - A compact informer can keep its store in a file (Options.Snapshot)
//     and resume from it on Run instead of listing: the server confirms the
//     file's RV first, a 410 or a mismatch lists as usual, and it counts as
//     synced once it has caught up with the server (snapshot.go).
//   - Run owns every goroutine the informer starts and waits for them all
//     before it returns; New starts none.
//   - RegisterMetrics exports Stats and Health (events, relists, watch
//     restarts, handler backlog, age of the last event) through a
//     metrics.Provider, read at scrape time.
//
// Typical use:
//
//	inf, err := informer.New(informer.Options[*corev1.Pod]{Client: c, Resource: kube.Pods})
//	inf.AddHandler(informer.HandlerFuncs[*corev1.Pod]{AddFunc: ..., UpdateFunc: ..., DeleteFunc: ...}, informer.HandlerOptions{})
//	go inf.Run(ctx)
//	inf.WaitForSync(ctx)
//	pods, _ := inf.Store().ByIndex(store.NamespaceIndex, "default")
package informer
