// Package sim is a simulated Kubernetes API server for list/watch work: an
// independent peer (it shares no code with kwatch's client packages) that speaks the
// wire protocol closely enough that kubectl and client-go cannot tell it from a real
// kube-apiserver for get, list, watch, create, update, patch and delete. Its
// behaviour is checked against the captures in internal/testdata/real-apiserver.
//
// # Use
//
//	srv, err := sim.New(sim.Options{})            // no goroutines yet
//	srv.PutPod(sim.Pod{Namespace: "demo", Name: "web-1"})
//	err = srv.Serve(ctx, ln)                      // blocks until ctx ends; all goroutines end
//
// Tests start it through kwatchtest (kwatchtest.Start, the public kit) or,
// when they need options or methods the kit does not offer, through
// internal/rig/simkit: simkit.Start(t, opts) serves the same kwatchtest
// server on 127.0.0.1:0 (plain HTTP, or TLS with HTTP/2 when Options.TLS),
// hands back this package's Server behind it, and stops at t.Cleanup.
//
// # Storage and resourceVersion
//
//   - One global resourceVersion, a uint64 sent as a decimal string; every write
//     (create, update, delete, implicit namespace creation) bumps it by one and
//     records one event. A no-op update keeps the old resourceVersion.
//   - Resources: pods, namespaces, configmaps, secrets, events, services, nodes,
//     deployments.apps, replicasets.apps, statefulsets.apps,
//     leases.coordination.k8s.io (for leader election), the webhook
//     configurations and customresourcedefinitions, plus any
//     RegisterResource adds or a CRD defines. Objects are stored as JSON and encoded once per
//     write: every list, get and watch writes the stored bytes (watch frames wrap
//     them in a prefix and suffix).
//   - Namespaces are created implicitly by the first object in them. Deletes keep
//     an object with finalizers, and a pod bound to a node for its grace period
//     (see Writes); nothing cascades (no garbage collector runs here).
//   - Pods written with PutPod, LoadPods or the churn generator have realistic
//     bodies of about 3-4 KB and any status they are given; pods created over HTTP
//     or with Create are stored as sent, with the spec defaults the real server
//     fills in (restartPolicy, schedulerName, tolerations, container pull policy and
//     so on; no service account volume) and their status replaced (see Writes).
//
// # Lists
//
//   - resourceVersion unset: the newest state, paginated by limit/continue.
//   - resourceVersion=0: the newest state, and limit is ignored (as the real
//     server's watch cache does: list-pods-rv0-limit2.json).
//   - resourceVersion=N (NotOlderThan, the default, with or without
//     resourceVersionMatch=NotOlderThan): waits up to Options.TooLargeWait (3 s, as
//     the real server) for N, else 504 Timeout with cause ResourceVersionTooLarge,
//     retryAfterSeconds 1, a Retry-After: 1 header and the message "Timeout: Too
//     large resource version: N, current: M", field for field as
//     list-pods-future-rv.txt (a client ahead of the server: an etcd restore, a
//     replaced control plane).
//   - resourceVersion=N&resourceVersionMatch=Exact: the state at N, rebuilt from the
//     history; 410 Expired once N is older than the retained history.
//   - Continue tokens have the real format (base64 of {"v","rv","start"}); later
//     pages are served from the snapshot at the first page's resourceVersion. A token
//     older than the history, or expired by a fault, gets 410 with a fresh token
//     (rv -1) in metadata.continue; a malformed one gets 400.
//   - remainingItemCount is set when more items follow and no selector is given.
//   - Label selectors and field selectors (metadata.name, metadata.namespace and
//     each resource's fields: for pods spec.nodeName, status.phase and the other
//     fields the real server supports); unknown fields and bad syntax get 400.
//   - Accept: as=Table with the real server's columns and cells for each
//     built-in kind (pods, deployments, replicasets, statefulsets, namespaces,
//     services, configmaps, secrets, nodes, events; table.go, tablecells.go), a
//     custom resource's ResourceInfo.PrinterColumns (AGE alone by default),
//     NAME/AGE otherwise; while watching, one-row Tables, the column definitions
//     on the first event only, BOOKMARKs too. as=PartialObjectMetadataList /
//     as=PartialObjectMetadata.
//   - Server.Journal records every change for tests that compare a client's
//     stream with the server's history.
//
// # Watches
//
//   - ?watch=1 or ?watch=true (and the legacy /watch/ paths). From resourceVersion
//     N: every event after N while N is within the history (Options.HistorySize
//     events, Options.HistoryWindow in time); older gets a 200 whose only event is
//     an ERROR with the 410 Expired Status. From "" or "0": an ADDED per current
//     object, then changes. A resourceVersion ahead of the server gets the 200 and
//     then nothing at all, no event and no bookmark (neither periodic nor
//     pre-deadline), until the server passes it or timeoutSeconds ends the stream
//     (watch-pods-future-rv.txt).
//   - sendInitialEvents=true&resourceVersionMatch=NotOlderThan: ADDED per object,
//     then a BOOKMARK annotated k8s.io/initial-events-end (with
//     allowWatchBookmarks). sendInitialEvents without resourceVersionMatch is 422.
//     At a resourceVersion ahead of the server: the 200 at once, then up to
//     Options.TooLargeWait for the server to reach it (then the initial events as
//     usual), else one ERROR event carrying the list's 504 ResourceVersionTooLarge
//     Status, and the stream ends (watch-pods-future-rv-streaming.txt).
//   - allowWatchBookmarks=true: a BOOKMARK every Options.BookmarkInterval (default
//     60 s) carrying the newest resourceVersion the watcher has passed. With
//     timeoutSeconds as well, one more BOOKMARK Options.DeadlineBookmarkLead (default
//     2 s) before the deadline, as the real watch cache sends, and like it only if the
//     resource has changed since the watch started (in any namespace, inside or
//     outside the selector): a quiet watch gets none. (The real server also skips
//     its periodic bookmark on a quiet watch; the simulator keeps sending it, so that
//     clients can tell an idle stream from a dead one, except on a watch from a
//     resourceVersion the server has not reached, which the real server keeps
//     silent and whose bookmark would carry an RV the server does not have.)
//   - timeoutSeconds, counted from the request, ends the stream cleanly (final zero
//     chunk).
//   - Selectors are applied per event: an object entering the selector is sent as
//     ADDED, one leaving it as DELETED (its previous state at the event's RV).
//   - Each event is flushed as its own chunk (HTTP/1.1) or DATA frame (HTTP/2).
//   - Watchers read the shared history ring (no per-watcher copy of events). A watcher
//     that falls more than Options.HistorySize events behind, because its client
//     reads too slowly, is terminated: its stream ends cleanly, as the real server
//     ends a watcher whose buffer fills; it then resumes from its last RV or relists.
//     Stats.TerminatedWatches counts these.
//
// # Writes
//
//   - POST creates (201; generateName; uid and creationTimestamp set; 409
//     AlreadyExists), PUT replaces (a stale metadata.resourceVersion is 409
//     Conflict), PATCH takes JSON merge patches, JSON patches (add, remove,
//     replace, which adds a missing member as the real server does, test, move,
//     copy; one that does not apply is the real server's bare 422), strategic merge
//     patches and server-side apply. A resourceVersion in a patch or an applied
//     configuration is a precondition; otherwise a patch that races with another
//     write is redone on the newer object.
//   - Strategic merge patch (strategic.go), for the built-in kinds only (custom
//     resources get 415, as there): lists with a merge key in fieldrules.go merge
//     by it (containers, initContainers, env and volumes by name, ports by
//     containerPort, volumeMounts by mountPath, service ports by port,
//     conditions by type, ownerReferences by uid...), finalizers merge as a set,
//     other lists are replaced; $patch (replace, delete, in maps and list
//     items), $retainKeys, $setElementOrder and $deleteFromPrimitiveList work,
//     and merged lists are ordered as the real server orders them.
//   - Server-side apply (apply.go; Content-Type application/apply-patch+yaml,
//     fieldManager required, force=true): the configuration is merged into the
//     object (created when missing, 201), fields the manager applied before and
//     no longer applies are removed unless another manager owns them, and a field
//     another manager owns with another value is a 409 with one
//     FieldManagerConflict cause per field (status-409-apply-conflict.json) unless
//     forced. Keyed lists merge by their ownership keys (ports by containerPort and
//     protocol, TCP when absent); lists the table does not key are atomic.
//   - metadata.managedFields (managedfields.go) is kept as the real server keeps
//     it, with structured-merge-diff, the library it uses, over a schema the
//     simulator builds per write from the objects and fieldrules.go (a map is a
//     struct unless the table makes it a map of data, as labels, data and
//     resources.limits are, or atomic, as label selectors are): an Update entry
//     (FieldsV1) for every client create, update and patch, under fieldManager, or
//     the User-Agent up to its first '/', or "unknown"; Apply entries; entries of
//     subresource status and scale (the latter without a time, as there). Writes
//     without managedFields keep the stored ones, and so do the in-process writes,
//     which record none. The defaults the real server fills in and the simulator
//     does not (a deployment's strategy, its pod template's defaults) are missing
//     from the object and so from its entries.
//   - Scale subresource (scale.go): GET, PUT and PATCH of deployments/,
//     replicasets/ and statefulsets/<name>/scale read and write spec.replicas as
//     an autoscaling/v1 Scale (status.selector as a string), listed by discovery,
//     so that kubectl scale works. Apply to a Scale is 415.
//   - DELETE (finalize.go) of an object with finalizers sets deletionTimestamp and
//     deletionGracePeriodSeconds 0 (bumping a generation), and the write that
//     clears the finalizers removes it; once deletionTimestamp is set, writes keep
//     it and may add no finalizer (422). Foreground adds the finalizer
//     foregroundDeletion and Orphan the finalizer orphan, which only a garbage
//     collector removes. A pod bound to a node is deleted gracefully
//     (deletionTimestamp its grace period ahead, 30 s by default) and stays until a
//     delete with grace period 0; the delete of any pod shows first as a MODIFIED
//     setting deletionTimestamp. An object kept is answered as itself (200);
//     namespaces and the in-process Delete remove at once. A removed object is
//     answered at its deletion resourceVersion for pods, services and namespaces,
//     a Status of Success naming it for other kinds, as the real server does; propagationPolicy,
//     orphanDependents and gracePeriodSeconds are checked as there (a bad policy is
//     422); uid and resourceVersion preconditions fail with the real server's 409
//     (status-409-delete-precondition.json). DELETE on a collection deletes what
//     its selectors match.
//   - dryRun=All on create, update, patch, apply and delete answers what the write
//     would produce (a create's answer has no resourceVersion, as there) and stores
//     nothing, so no watch sees it; other dryRun values, a fieldManager over 128
//     bytes and force on a patch that is not an apply are the real server's 422.
//   - Client writes are validated as the real server validates them
//     (validate.go, status-422-invalid.json): the name (a DNS-1123 subdomain, a
//     label for namespaces and services; generateName as its prefix) on create,
//     and the keys of configmaps' and secrets' data on every write. Nothing else
//     is validated.
//   - Status subresource (pods, namespaces, services, nodes, deployments,
//     replicasets, statefulsets; ResourceInfo.StatusSubresource for others): a create over HTTP
//     or with Create discards the status sent and sets the kind's initial one (a pod
//     gets {phase: Pending, qosClass} with the QoS class computed from its
//     containers' or pod-level cpu and memory requests and limits, requests
//     defaulting to limits; a namespace {phase: Active}; nodes keep theirs). A PUT or
//     PATCH of the object keeps the stored status; PUT and PATCH of <object>/status
//     change only the status (a pod keeps its qosClass). The in-process Update,
//     Patch, PutPod, LoadPods and Churn write any status (they stand for the
//     kubelet and controllers). Unparsable quantities are 400, negative ones and
//     requests above limits 422.
//   - Create and update bodies are JSON, YAML or, for the built-in kinds (the default
//     resources, leases and events included, and service accounts when registered), protobuf,
//     up to Options.MaxRequestBytes. kubectl's imperative creates ("create
//     namespace", "create configmap", "create deployment") send protobuf. A protobuf
//     body is read with a table generated from k8s.io/api (protoschema_gen.go) into
//     the JSON the real server writes for the typed object, absent and zero fields
//     included as encoding/json treats them, then stored as a JSON body would be;
//     quantities are kept as sent, not canonicalized. A malformed one is a 400
//     naming the field and byte offset; a kind the table lacks (custom resources)
//     gets 415, as do CBOR bodies. Patches are never protobuf. Answers are JSON: an
//     Accept naming only protobuf gets 406.
//
// # Webhooks and CustomResourceDefinitions
//
//   - A client's create, update, patch, apply and delete is sent to the
//     matching admission webhooks of the stored Validating- and
//     MutatingWebhookConfigurations (admission.go says which fields count
//     and how denials and failures are worded); in-process writes skip them.
//   - A CustomResourceDefinition written to the server makes its resource
//     served at once, Established; its versions other than the storage one
//     are served through its conversion (crd.go, versions.go): None, or its
//     conversion webhook, on get, list, create, update, merge and JSON
//     patch and delete (not watch or apply).
//
// # Other endpoints
//
// /version, /api, /apis, /api/v1, /apis/<group>, /apis/<group>/<version> in legacy
// form, and /api and /apis in aggregated form (apidiscovery.k8s.io/v2) when asked;
// /openapi/v3 with just enough for kubectl to leave field validation to the server
// (no schemas; /openapi/v2 is 404); /healthz, /livez, /readyz. Errors are Status
// bodies like the real server's (400, 401, 403, 404, 405, 406, 409, 410, 413, 415, 422,
// 429, 504). With Options.BearerToken (the admin) or Options.Users every other
// request needs a known token (401 otherwise). A User may do only what its Rules
// grant (verbs on resources, cluster-wide or in namespaces) besides discovery;
// anything else is 403 Forbidden with the real server's message, decided from the
// URL before the resource is looked up. Options.TLS serves TLS with HTTP/2 (1000 streams per connection by
// default) using a self-signed certificate made in memory (CACertPEM).
//
// When Serve's context ends, every open watch and stalled response ends (on any
// listener serving Handler), the listener closes, and Serve returns after the last
// handler.
//
// # Faults
//
// Faults are queued with InjectFault (or POST /sim/faults with the Fault as JSON)
// and consumed by the next Count matching requests (Match: list, watch, get,
// write; Resource). ClearFaults (DELETE /sim/faults) drops the pending ones and
// voids those taken but not applied yet (a watch short of its AfterEvents events),
// and bodies being split are written whole from then on; a stall in progress goes
// on until its client leaves. The faults:
//
//   - drop-watch: end a watch cleanly after AfterEvents events.
//   - cut-watch: abort a watch in the middle of the frame after AfterEvents events,
//     without the final zero chunk (HTTP/2: stream reset).
//   - stall: send the headers (and AfterEvents events), then nothing until the client
//     goes away.
//   - error: answer 429, 500 or 503 with Retry-After.
//   - split-writes: write the body in random pieces of 1-64 bytes, each flushed.
//
// Immediate actions: Compact (type "compact"), ExpireContinueTokens
// ("expire-continue"), DropWatches ("drop-watches", with loseHistory to force every
// watcher to relist).
//
// InjectFaultTracked queues a fault as InjectFault does and returns a handle whose
// Wait returns once that very fault fired (faultwait.go), so tests need no sleeps.
//
// Faults count when they fire, not when they are queued or taken: FiredFaults
// (Stats.FaultsFired; GET /sim/faults answers a FaultReport with the pending faults
// and these counts) gives, per type, each time a request fault was applied (an
// error or a stall answered; a watch dropped, cut or stalled once its AfterEvents
// events were sent; a body that wrote at least one byte in pieces) and each time an
// action was performed, by InjectFault or by its method. A request that takes a
// fault and ends before the fault's moment (a watch whose client leaves first) uses
// one of its Count but does not count as fired; Stats.FaultsInjected counts those
// takings.
//
// # In-process API
//
// Create, Update, Patch, Delete, Get and Snapshot work on any resource by name
// ("pods", "deployments.apps"); PutPod and LoadPods write generated pods;
// ResourceVersion is the newest RV; Stats counts requests per resource and verb and
// fired faults (GET /sim/stats serves the same), ResetStats zeroes them, and
// FiredFaults gives the fired faults alone. Churn generates load. ResourceFor
// names the resource of an apiVersion and kind. CollectGarbage (gc.go) does, until
// its context ends, what kube-controller-manager's garbage collector would:
// background, foreground and orphan deletion by ownerReferences.
package sim
